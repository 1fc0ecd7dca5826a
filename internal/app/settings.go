package app

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/llm"
	"quarry/internal/skills/searcher"
	"quarry/internal/store"
)

// A setting is one value of Config and every way to give it: its flag,
// environment variable and key in the QUARRY_CONFIG file (the flag and the
// key may be empty: secrets have no flag, so they never show in a process
// list, and the server's own address, database and cookies are not file
// keys), its default, and what it sets. The table of settings is the one
// place that knows them: Load, the flags, `quarry serve -h` and the
// README's table all come from it.
type setting struct {
	flag string // without dashes
	env  string // also the setting's name in code (Load's only, Bind's only)
	key  string // in the file; a dot goes into an object: "llm.model"
	// def is the default value, parsed like any other when nothing else
	// gives one; "" means none.
	def string
	// shown describes the default where def cannot say it (a default
	// worked out at start-up); Markdown, like doc.
	shown string
	doc   string
	// set parses v (trimmed; never empty) into c, or says in a phrase
	// what is wrong with it; Load names where the value came from.
	set func(c *Config, v string) error
}

// settings lists every setting, in the order help and the README show them.
func settings() []setting {
	all := []setting{
		{flag: "config", env: "QUARRY_CONFIG", set: text(func(c *Config) *string { return &c.File }),
			doc: "a JSON file of the settings that have a `QUARRY_CONFIG` key; their flags and variables override it key by key"},
		{flag: "addr", env: "QUARRY_ADDR", def: DefaultAddr, set: text(func(c *Config) *string { return &c.Addr }),
			doc: "address to listen on, `host:port`; port 0 picks a free port"},
		{flag: "db", env: "QUARRY_DB", def: DefaultDB, set: text(func(c *Config) *string { return &c.DB }),
			doc: "path of the SQLite database"},
		{env: "QUARRY_DATABASE_URL", set: text(func(c *Config) *string { return &c.DatabaseURL }),
			doc: "a `postgres://` URL: run on PostgreSQL instead of the SQLite file, with any number of replicas sharing it (environment only, as it may hold a password; `docs/scaling.md`)"},
		{env: "QUARRY_DB_BUSY_TIMEOUT", key: "db_busy_timeout", shown: "`" + store.DefaultBusyTimeout.String() + "`", set: setBusyTimeout,
			doc: "how long a write waits while another process (such as `quarry import`) holds the database's write lock; after it the request answers 503 with `Retry-After`"},
		{env: "QUARRY_DB_MAX_MB", key: "db_max_mb", def: "0", set: setDBMaxMB,
			doc: "cap on the database file in MiB, 0 for none; at the cap Quarry behaves as on a full disk (507, nothing lost, work resumes once there is room)"},
		{env: "QUARRY_IMPORT_RESERVE_MB", key: "import.reserve_mb", def: strconv.Itoa(store.DefaultImportReserve >> 20), set: setImportReserve,
			doc: "imports stop, naming the full disk, while less than this many MiB is free on the disk holding the database, leaving room for runs; 0 turns the check off"},
		{env: "QUARRY_LIBRARY_SEARCH", key: "library_search", def: store.RankMemory, set: setLibrarySearch,
			doc: "how the library's full-text search ranks: `memory` (an in-memory bm25 index per process, on either database) or `postgres` (PostgreSQL's `tsvector`, bm25 computed from its positions, no index in memory; PostgreSQL only; `docs/search.md` compares them)"},
		{env: "QUARRY_BACKUP_DIR", key: "backup_dir", shown: "`backups` beside the database", set: text(func(c *Config) *string { return &c.Database.BackupDir }),
			doc: "where backups are written (`quarry backup`, before migrations, imports and restores)"},
		{env: "QUARRY_BACKUP_KEEP", key: "backup_keep", def: strconv.Itoa(store.DefaultBackupKeep), set: intIn(1, 10000, "", func(c *Config) *int { return &c.Database.BackupKeep }),
			doc: "how many backups are kept, the newest; older ones are deleted with their files"},
		{env: "QUARRY_PG_DUMP", key: "pg_dump", shown: "`pg_dump` on `PATH`, else the newest in `/usr/lib/postgresql`", set: text(func(c *Config) *string { return &c.Database.PgDump }),
			doc: "on PostgreSQL, the `pg_dump` program that writes backups (before migrations, `quarry backup`, before runs that ask); its archives are restored with `pg_restore`"},
		{env: "QUARRY_PG_BACKUP_CONFIRMED", set: intIn(1, 1<<30, "", func(c *Config) *int { return &c.Database.PgBackupConfirmed }),
			doc: "on PostgreSQL without `pg_dump`: the schema version you backed up yourself (the number Quarry's refusal to migrate names); migrating from that version then goes ahead without a dump, and from any other version it does not (environment only)"},
		{env: "QUARRY_SESSION_KEY", shown: "generated on first start and kept in the database", set: text(func(c *Config) *string { return &c.SessionKey }),
			doc: "secret behind the session cookies, at least 32 characters"},
		{flag: "open-mode", env: "QUARRY_OPEN_MODE", def: "false", set: boolean(func(c *Config) *bool { return &c.OpenMode }),
			doc: "`true` runs without accounts: anyone who reaches the server may do anything and decisions record the name a browser gives (a personal installation, scripts); `false` has people sign in, the first visit creating the administrator"},
		{flag: "public-url", env: "QUARRY_PUBLIC_URL", set: text(func(c *Config) *string { return &c.PublicURL }),
			doc: "the address people use, e.g. `https://quarry.example.org` behind a TLS proxy: `https` marks the session cookie (which carries the CSRF token) `Secure`"},
		{env: "QUARRY_OIDC_ISSUER", key: "oidc.issuer", set: text(func(c *Config) *string { return &c.OIDC.Issuer }),
			doc: "an OpenID Connect provider's issuer URL (e.g. `https://accounts.google.com`, a Keycloak realm): the sign-in page offers single sign-on through it; register `<QUARRY_PUBLIC_URL>/login/oidc/callback` there as the redirect URL; empty: no single sign-on"},
		{env: "QUARRY_OIDC_CLIENT_ID", key: "oidc.client_id", set: text(func(c *Config) *string { return &c.OIDC.ClientID }),
			doc: "the client ID the provider gave Quarry"},
		{env: "QUARRY_OIDC_CLIENT_SECRET", set: text(func(c *Config) *string { return &c.OIDC.ClientSecret }),
			doc: "the client secret the provider gave Quarry (environment only); never logged or shown"},
		{env: "QUARRY_OIDC_NAME", key: "oidc.name", shown: "`" + DefaultOIDCName + "`", set: text(func(c *Config) *string { return &c.OIDC.Name }),
			doc: "the provider's name on the sign-in button (\"Sign in with …\")"},
		{env: "QUARRY_OIDC_CREATE_ACCOUNTS", key: "oidc.create_accounts", def: "false", set: boolean(func(c *Config) *bool { return &c.OIDC.CreateAccounts }),
			doc: "`true` creates an account (no project, not an administrator) for a person the provider signs in who has none, when it vouches for their e-mail; `false` admits only people with an account (an invitation), linking it by its e-mail on their first single sign-on"},
		{flag: "log-format", env: "QUARRY_LOG_FORMAT", key: "log_format", def: LogText, set: setLogFormat,
			doc: "`text` (key=value lines) or `json` (one object a line)"},
		{flag: "log-level", env: "QUARRY_LOG_LEVEL", key: "log_level", def: "info", set: setLogLevel,
			doc: "the least severe level logged: `debug`, `info`, `warn` or `error`"},
		{env: "QUARRY_SOURCES", key: "sources", def: "local", set: setSources,
			doc: "the sources searched, comma-separated (a list in the file): `local`, `openalex`, `semantic_scholar`, `arxiv`, `crossref`, `pubmed`, `serpapi_scholar`"},
		{env: "QUARRY_CONTACT_EMAIL", key: "contact_email", set: text(func(c *Config) *string { return &c.Search.ContactEmail }),
			doc: "sent to OpenAlex, Crossref and PubMed's polite pools"},
		{env: "QUARRY_SEMANTIC_SCHOLAR_KEY", key: "semantic_scholar_key", set: text(func(c *Config) *string { return &c.Search.SemanticScholarKey }),
			doc: "Semantic Scholar API key"},
		{env: "QUARRY_SERPAPI_KEY", key: "serpapi_key", set: text(func(c *Config) *string { return &c.Search.SerpAPIKey }),
			doc: "SerpAPI key, required for `serpapi_scholar`"},
		{env: "QUARRY_OPENALEX_KEY", key: "openalex_key", set: text(func(c *Config) *string { return &c.Search.OpenAlexKey }),
			doc: "OpenAlex API key, required for `openalex` (OpenAlex has required a key since February 2026)"},
		{env: "QUARRY_PUBMED_KEY", key: "pubmed_key", set: text(func(c *Config) *string { return &c.Search.PubMedKey }),
			doc: "NCBI E-utilities API key (10 requests a second instead of 3)"},
	}
	for _, src := range onlineSources() {
		all = append(all, setting{env: "QUARRY_" + strings.ToUpper(src.name) + "_URL", key: "base_urls." + src.name, shown: "`" + src.baseURL + "`",
			set: setBaseURL(src.name), doc: src.name + "'s API root (for mirrors and tests)"})
	}
	return append(all,
		setting{flag: "source-deadline", env: "QUARRY_SOURCE_DEADLINE", key: "source_deadline", shown: "`" + searcher.DefaultSourceDeadline.String() + "`", set: setSourceDeadline,
			doc: "how long one source may take for all its queries in one search, waits for its rate limit included; what it answered by then is kept, the rest reported as timed out"},
		setting{env: "QUARRY_STRATEGY_CHECKPOINT", key: "strategy_checkpoint", def: "true", set: setStrategyCheckpoint,
			doc: `the default of "confirm the strategy first" (true or false)`},
		setting{env: "QUARRY_EXCLUSION_REASONS", key: "exclusion_reasons", def: strings.Join(research.DefaultExclusionReasons(), ","), set: setExclusionReasons,
			doc: "the reasons the review offers for excluding a paper, comma-separated (a list in the file); keys 1–9 choose the first nine, and any other text is accepted too"},

		setting{env: "QUARRY_STOP_WINDOW", key: "stop_window", def: strconv.Itoa(research.DefaultStopWindow), set: intIn(1, 100000, "of papers ", func(c *Config) *int { return &c.StopWindow }),
			doc: "k of the review's stopping suggestion \"no relevant paper in the last k screened\" (a hint; a run never stops by itself)"},
		setting{flag: "workflows-dir", env: "QUARRY_WORKFLOWS_DIR", key: "workflows_dir", set: text(func(c *Config) *string { return &c.WorkflowsDir }),
			doc: "a directory of workflow definition files (`*.yaml`, `*.yml`; see `docs/workflows.md`) listed on /workflows, each drawn or shown with its errors"},
		setting{env: "QUARRY_WEBHOOK_HOSTS", key: "webhook_hosts", set: setWebhookHosts,
			doc: "the hosts workflow webhook stages may call, comma-separated (a list in the file): `host` allows that host on any port, `host:port` that port only; nothing else is ever fetched by a workflow"},
		setting{env: "QUARRY_EXPORT_DIR", key: "export_dir", set: text(func(c *Config) *string { return &c.ExportDir }),
			doc: "where workflows' `export` actions write their files (a plain file name inside it, never outside); empty refuses exports"},
		setting{env: "QUARRY_SMTP_ADDR", key: "smtp.addr", set: text(func(c *Config) *string { return &c.SMTP.Addr }),
			doc: "the mail server (`host:port`) workflows' `notify` actions send e-mail through, with STARTTLS when it offers it; empty: no e-mail"},
		setting{env: "QUARRY_SMTP_FROM", key: "smtp.from", set: text(func(c *Config) *string { return &c.SMTP.From }),
			doc: "the sender of notice e-mails, e.g. `Quarry <quarry@example.org>`"},
		setting{env: "QUARRY_SMTP_USER", key: "smtp.user", set: text(func(c *Config) *string { return &c.SMTP.User }),
			doc: "the mail server's user name, if it asks for one (PLAIN, over TLS only)"},
		setting{env: "QUARRY_SMTP_PASSWORD", key: "smtp.password", set: text(func(c *Config) *string { return &c.SMTP.Password }),
			doc: "the mail server's password; never logged or shown"},
		setting{env: "QUARRY_BRANCH_WORKERS", key: "branch_workers", def: strconv.Itoa(store.DefaultBranchWorkers), set: intIn(1, 256, "", func(c *Config) *int { return &c.BranchWorkers }),
			doc: "how many branches of workflows' parallel stages run at once, across runs, 1 to 256; the rest wait their turn in the job queue"},
		setting{env: "QUARRY_JOB_RESCUE_AFTER", key: "job_rescue_after", shown: "`" + store.DefaultRescueAfter.String() + "`", set: setJobRescueAfter,
			doc: "on PostgreSQL, how long a run's job may run: a job left running by a replica that died (kill -9, a lost machine) is run again by another replica after this, and a live job still running then is canceled and retried; keep it above the longest step, 1s to 24h (SQLite's jobs have no timeout)"},
		setting{env: "QUARRY_MAX_ACTIVE_RUNS", key: "max_active_runs", def: "0", set: intIn(0, 100000, "", func(c *Config) *int { return &c.MaxActiveRuns }),
			doc: "how many runs may execute at once, of every workflow and across the processes sharing the database (0: no limit but the job workers); a run over the limit is not refused, it waits its turn and says so; a run waiting for a person, a timer or its branches does not count"},
		setting{env: "QUARRY_WORKFLOW_LIMITS", key: "workflow_limits", set: setWorkflowLimits,
			doc: "per-workflow limits on the runs executing at once, comma-separated `name=N` (e.g. `screening=2,search=4`); they wait their turn like QUARRY_MAX_ACTIVE_RUNS"},
		setting{env: "QUARRY_WEBHOOK_SECRETS_FILE", key: "webhook_secrets_file", set: setWebhookSecrets,
			doc: "a file of `NAME=value` lines (`#` starts a comment): the values `{{ secrets.NAME }}` fills in workflow webhook requests; never logged, shown or stored in a run"},
		setting{env: "QUARRY_LLM_PROVIDER", key: "llm.provider", def: llm.ProviderOffline, set: setProvider,
			doc: "`offline` (heuristic skills); `openai` (any OpenAI-compatible server: Ollama, vLLM, llama.cpp, OpenRouter) or `anthropic`"},
		setting{env: "QUARRY_LLM_MODEL", key: "llm.model", shown: "`" + llm.DefaultOpenAIModel + "` (openai), `" + llm.DefaultAnthropicModel + "` (anthropic)",
			set: text(func(c *Config) *string { return &c.Search.LLM.Model }), doc: "the model the skills ask"},
		setting{env: "QUARRY_LLM_BASE_URL", key: "llm.base_url", shown: "the provider's API", set: setLLMBaseURL,
			doc: "the API root, e.g. `http://localhost:11434/v1` for Ollama"},
		setting{env: "QUARRY_LLM_API_KEY", key: "llm.api_key", shown: "`OPENAI_API_KEY` / `ANTHROPIC_API_KEY`",
			set: text(func(c *Config) *string { return &c.Search.LLM.APIKey }), doc: "the provider's API key"},
		setting{env: "QUARRY_LLM_TIMEOUT", key: "llm.timeout", def: "90s", set: setLLMTimeout,
			doc: "how long one request may take, a duration such as `90s` or `3m`"},
		setting{env: "QUARRY_LLM_MAX_RETRIES", key: "llm.max_retries", def: strconv.Itoa(llm.DefaultMaxRetries), set: setLLMRetries,
			doc: "how often a failed request is retried, 0 to 10"},
		setting{env: "QUARRY_LLM_RUN_TOKEN_BUDGET", key: "llm.run_token_budget", def: strconv.Itoa(llm.DefaultRunTokenBudget), set: setLLMRunBudget,
			doc: "how many tokens (in and out) one run may spend on the model, 0 for no cap; a run that has spent them stops asking the model, uses the offline skills and says so in its notes"},
		setting{env: "QUARRY_EMBED_PROVIDER", key: "embed.provider", def: embed.ProviderOffline, set: setEmbedProvider,
			doc: "`offline` (no vectors: search ranks by words alone) or `openai` (any OpenAI-compatible `/embeddings`: OpenAI, Ollama, vLLM, llama.cpp): the library is embedded in the background and searches fuse word and vector rankings"},
		setting{env: "QUARRY_EMBED_MODEL", key: "embed.model", shown: "`" + embed.DefaultModel + "`",
			set: text(func(c *Config) *string { return &c.Search.Embed.Model }), doc: "the embeddings model; vectors are stored under its name, so changing it embeds the library again"},
		setting{env: "QUARRY_EMBED_BASE_URL", key: "embed.base_url", shown: "`" + embed.DefaultBaseURL + "`", set: setEmbedBaseURL,
			doc: "the API root, e.g. `http://localhost:11434/v1` for Ollama"},
		setting{env: "QUARRY_EMBED_API_KEY", key: "embed.api_key", shown: "`OPENAI_API_KEY`",
			set: text(func(c *Config) *string { return &c.Search.Embed.APIKey }), doc: "the embeddings server's API key; never logged or shown"},
		setting{env: "QUARRY_EMBED_TIMEOUT", key: "embed.timeout", def: embed.DefaultTimeout.String(), set: setEmbedTimeout,
			doc: "how long one embeddings request may take"},
		setting{env: "QUARRY_EMBED_MAX_RETRIES", key: "embed.max_retries", def: strconv.Itoa(embed.DefaultMaxRetries),
			set: intIn(0, 10, "", func(c *Config) *int { return &c.Search.Embed.MaxRetries }),
			doc: "how often a rate-limited (429) or failed (5xx) embeddings request is retried, with growing waits, 0 to 10"},
		setting{env: "QUARRY_IMPORT_MAX_LINE_MB", key: "import.max_line_mb", def: strconv.Itoa(biblio.DefaultMaxLine >> 20),
			set: setMiB(func(c *Config) *int { return &c.Import.Limits.MaxLine }),
			doc: "imports and attached files: the longest line (RIS, MEDLINE, CSV, JSON Lines) or field value (BibTeX, CSL-JSON) read, in MiB; a record with a longer one is skipped and reported"},
		setting{env: "QUARRY_IMPORT_MAX_RECORD_MB", key: "import.max_record_mb", def: strconv.Itoa(biblio.DefaultMaxRecord >> 20),
			set: setMiB(func(c *Config) *int { return &c.Import.Limits.MaxRecord }),
			doc: "the largest record read, in MiB; a larger one is skipped and reported, and the import goes on"},
		setting{env: "QUARRY_IMPORT_GZIP_RATIO", key: "import.gzip_ratio", def: strconv.Itoa(codecs.DefaultGzipRatio), set: setGzipRatio,
			doc: "a gzipped file may decompress to this many times the compressed bytes read (or to the floor below, whichever is more); past it the import is refused"},
		setting{env: "QUARRY_IMPORT_GZIP_FLOOR_MB", key: "import.gzip_floor_mb", def: strconv.Itoa(codecs.DefaultGzipFloor >> 20), set: setGzipFloor,
			doc: "what any gzipped file may decompress to whatever its ratio, in MiB"},
	)
}

// setMiB sets a size given in whole MiB, 1 to 1024.
func setMiB(field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1024 {
			return fmt.Errorf("%q is not a whole number of MiB between 1 and 1024", v)
		}
		*field(c) = n << 20
		return nil
	}
}

func setGzipRatio(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 2 || n > 100000 {
		return fmt.Errorf("%q is not a whole number between 2 and 100000", v)
	}
	c.Import.Gzip.Ratio = int64(n)
	return nil
}

func setGzipFloor(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > 1<<20 {
		return fmt.Errorf("%q is not a whole number of MiB between 1 and 1048576", v)
	}
	c.Import.Gzip.Floor = int64(n) << 20
	return nil
}

// text is the set function of a setting taken as it is given.
func text(field func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error {
		*field(c) = v
		return nil
	}
}

func setLibrarySearch(c *Config, v string) error {
	v = strings.ToLower(v)
	if v != store.RankMemory && v != store.RankPostgres {
		return fmt.Errorf("%q is not %s or %s", v, store.RankMemory, store.RankPostgres)
	}
	c.Database.LibraryRanking = v
	return nil
}

func setLogFormat(c *Config, v string) error {
	v = strings.ToLower(v)
	if v != LogText && v != LogJSON {
		return fmt.Errorf("%q is not %s or %s", v, LogText, LogJSON)
	}
	c.LogFormat = v
	return nil
}

func setLogLevel(c *Config, v string) error {
	levels := map[string]slog.Level{"debug": slog.LevelDebug, "info": slog.LevelInfo, "warn": slog.LevelWarn, "error": slog.LevelError}
	l, ok := levels[strings.ToLower(v)]
	if !ok {
		return fmt.Errorf("%q is not one of debug, info, warn, error", v)
	}
	c.LogLevel = l
	return nil
}

// setSources splits a comma-separated list (the file's list arrives
// joined); names are checked by Validate, which can say which one is wrong.
func setSources(c *Config, v string) error {
	c.Search.Sources = nil
	for s := range strings.SplitSeq(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			c.Search.Sources = append(c.Search.Sources, s)
		}
	}
	return nil
}

// setExclusionReasons splits a comma-separated list of exclusion reasons,
// dropping blanks and repeats; Validate checks their number and length.
func setExclusionReasons(c *Config, v string) error {
	c.ExclusionReasons = nil
	for r := range strings.SplitSeq(v, ",") {
		if r = strings.TrimSpace(r); r != "" && !slices.Contains(c.ExclusionReasons, r) {
			c.ExclusionReasons = append(c.ExclusionReasons, r)
		}
	}
	if len(c.ExclusionReasons) == 0 {
		return errors.New("names no reason")
	}
	return nil
}

// setWebhookHosts splits a comma-separated allowlist, dropping blanks
// and repeats; hosts are compared without case (def.HostAllowed).
func setWebhookHosts(c *Config, v string) error {
	c.WebhookHosts = nil
	for h := range strings.SplitSeq(v, ",") {
		if h = strings.ToLower(strings.TrimSpace(h)); h != "" && !slices.Contains(c.WebhookHosts, h) {
			if strings.ContainsAny(h, "/ ?#@") {
				return fmt.Errorf("%q is not a host or host:port", h)
			}
			c.WebhookHosts = append(c.WebhookHosts, h)
		}
	}
	return nil
}

// setWorkflowLimits reads `name=N` pairs, comma-separated.
func setWorkflowLimits(c *Config, v string) error {
	c.WorkflowLimits = map[string]int{}
	for pair := range strings.SplitSeq(v, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		name, n, ok := strings.Cut(pair, "=")
		name = strings.TrimSpace(name)
		limit, err := strconv.Atoi(strings.TrimSpace(n))
		if !ok || name == "" || err != nil || limit < 1 {
			return fmt.Errorf("%q is not name=N with N a whole number from 1", pair)
		}
		if _, dup := c.WorkflowLimits[name]; dup {
			return fmt.Errorf("%q: workflow %s is limited twice", pair, name)
		}
		c.WorkflowLimits[name] = limit
	}
	return nil
}

// setWebhookSecrets reads the secrets file: NAME=value lines, NAME as an
// expression name (letters, digits, _; not first a digit), blank lines
// and # comments skipped. An error names the line, never its value.
func setWebhookSecrets(c *Config, path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("cannot read the secrets file: %w", err)
	}
	c.WebhookSecrets = map[string]string{}
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name, value, ok := strings.Cut(line, "=")
		name = strings.TrimSpace(name)
		if !ok || !isSecretName(name) {
			return fmt.Errorf("%s:%d: want NAME=value, NAME of letters, digits and _", path, i+1)
		}
		c.WebhookSecrets[name] = strings.TrimSpace(value)
	}
	return nil
}

// isSecretName reports whether `secrets.NAME` can reach name: letters,
// digits and _, not first a digit.
func isSecretName(name string) bool {
	for i, r := range name {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return name != ""
}

func setBaseURL(source string) func(*Config, string) error {
	return func(c *Config, v string) error {
		if c.Search.BaseURLs == nil {
			c.Search.BaseURLs = map[string]string{}
		}
		c.Search.BaseURLs[source] = v
		return nil
	}
}

func setStrategyCheckpoint(c *Config, v string) error {
	var on bool
	if err := boolean(func(*Config) *bool { return &on })(c, v); err != nil {
		return err
	}
	c.Search.StrategyCheckpoint = &on
	return nil
}

// boolean sets a true-or-false setting (1/0, true/false, yes/no, on/off).
func boolean(field func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		switch v = strings.ToLower(v); v {
		case "1", "true", "yes", "on":
			*field(c) = true
		case "0", "false", "no", "off":
			*field(c) = false
		default:
			return fmt.Errorf("%q is not true or false", v)
		}
		return nil
	}
}

// intIn sets an int setting that must be a whole number from lo to hi
// (of what, e.g. "papers ", named in the error).
func intIn(lo, hi int, what string, field func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < lo || n > hi {
			return fmt.Errorf("%q is not a whole number %sbetween %d and %d", v, what, lo, hi)
		}
		*field(c) = n
		return nil
	}
}

func setProvider(c *Config, v string) error {
	if err := llm.CheckProvider(v); err != nil {
		return err
	}
	c.Search.LLM.Provider = strings.ToLower(v)
	return nil
}

func setEmbedProvider(c *Config, v string) error {
	if err := embed.CheckProvider(v); err != nil {
		return err
	}
	c.Search.Embed.Provider = strings.ToLower(v)
	return nil
}

func setEmbedBaseURL(c *Config, v string) error {
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", v)
	}
	c.Search.Embed.BaseURL = v
	return nil
}

func setEmbedTimeout(c *Config, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a positive duration such as 60s", v)
	}
	c.Search.Embed.Timeout = d
	return nil
}

func setLLMBaseURL(c *Config, v string) error {
	if u, err := url.Parse(v); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an http(s) URL", v)
	}
	c.Search.LLM.BaseURL = v
	return nil
}

func setLLMTimeout(c *Config, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a positive duration such as 90s", v)
	}
	c.Search.LLM.Timeout = d
	return nil
}

func setSourceDeadline(c *Config, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q is not a positive duration such as 30s", v)
	}
	c.Search.SourceDeadline = d
	return nil
}

func setJobRescueAfter(c *Config, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second || d > 24*time.Hour {
		return fmt.Errorf("%q is not a duration between 1s and 24h", v)
	}
	c.JobRescueAfter = d
	return nil
}

func setBusyTimeout(c *Config, v string) error {
	d, err := time.ParseDuration(v)
	if err != nil || d < 100*time.Millisecond || d > 10*time.Minute {
		return fmt.Errorf("%q is not a duration between 100ms and 10m", v)
	}
	c.Database.BusyTimeout = d
	return nil
}

func setImportReserve(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		return fmt.Errorf("%q is not a whole number of MiB (0 turns the check off)", v)
	}
	c.Database.ImportReserve = int64(n) << 20
	if n == 0 {
		c.Database.ImportReserve = -1
	}
	return nil
}

func setDBMaxMB(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 1<<30 {
		return fmt.Errorf("%q is not a whole number of MiB (0 for no cap)", v)
	}
	c.Database.MaxBytes = int64(n) << 20
	return nil
}

func setLLMRetries(c *Config, v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > 10 {
		return fmt.Errorf("%q is not a whole number between 0 and 10", v)
	}
	c.Search.LLM.MaxRetries = n
	return nil
}

func setLLMRunBudget(c *Config, v string) error {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("%q is not a whole number of tokens (0 for no cap)", v)
	}
	c.Search.LLM.RunTokenBudget = n
	return nil
}

// Flags holds the settings given on a command line, by flag name, for
// Load. Only flags that were given are in it, so a flag left out lets the
// environment, the file or the default speak.
type Flags map[string]string

// Bind adds to fs a flag for each setting that has one: those named by
// their environment variable in only, or all.
func (f Flags) Bind(fs *flag.FlagSet, only ...string) {
	for _, s := range selected(only) {
		if s.flag != "" {
			fs.Var(flagValue{f, s.flag, s.def}, s.flag, plain(s.doc)+" (env "+s.env+")")
		}
	}
}

// flagValue records a setting's flag in Flags when it is given. Its
// String is the default, which the flag package shows in its usage.
type flagValue struct {
	flags     Flags
	name, def string
}

func (v flagValue) String() string { return v.def }

func (v flagValue) Set(s string) error {
	v.flags[v.name] = s
	return nil
}

// selected returns the settings named in only by environment variable, or
// all of them when only is empty.
func selected(only []string) []setting {
	all := settings()
	if len(only) == 0 {
		return all
	}
	return slices.DeleteFunc(all, func(s setting) bool { return !slices.Contains(only, s.env) })
}

// Load resolves each setting from, first to last, its flag (if given),
// its environment variable (if set and not blank), its key in the
// QUARRY_CONFIG file, and its default; then it checks the whole (Validate).
// Every malformed value, and every unknown key in the file, is a
// fault.EInvalid error naming where it came from (--log-level,
// QUARRY_LLM_TIMEOUT, llm.timeout), so the person fixing it knows what to
// edit. A value that is overridden is not checked. getenv is os.Getenv in
// main and a map in tests; nothing below this package reads the
// environment.
//
// A command that needs only some settings (import: the database) names
// them by environment variable in only; it does not fail on a problem in
// the others, and the rest of the Config is left zero and not validated.
func Load(flags Flags, getenv func(string) string, only ...string) (Config, error) {
	var cfg Config
	fe := fault.FieldErrors{}
	chosen := selected(only)
	var file map[string]string
	// The file is found first, by its own flag or variable, since the
	// other settings may come from it.
	if path, from := pick(selected([]string{"QUARRY_CONFIG"})[0], flags, getenv, nil); path != "" && slices.ContainsFunc(chosen, func(s setting) bool { return s.key != "" }) {
		var err error
		if file, err = readFile(path, from); err != nil {
			return Config{}, err
		}
	}
	for _, s := range chosen {
		v, from := pick(s, flags, getenv, file)
		if v == "" {
			continue
		}
		if err := s.set(&cfg, v); err != nil {
			fe.Add(from, err.Error())
		}
	}
	if err := fe.Err("invalid configuration"); err != nil {
		return Config{}, err
	}
	if len(only) > 0 {
		return cfg, nil
	}
	resolveLLM(&cfg.Search.LLM, getenv)
	if cfg.Search.Embed.Provider == embed.ProviderOpenAI {
		// Like the LLM's: the vendor's own variable is an ambient fallback.
		cfg.Search.Embed.APIKey = cmp.Or(cfg.Search.Embed.APIKey, strings.TrimSpace(getenv("OPENAI_API_KEY")))
	}
	return cfg, cfg.Validate()
}

// pick returns s's value and where it came from: the flag when given (even
// empty, to clear a value), else the environment, else the file, else the
// default.
func pick(s setting, flags Flags, getenv func(string) string, file map[string]string) (value, from string) {
	if v, ok := flags[s.flag]; ok && s.flag != "" {
		return strings.TrimSpace(v), "--" + s.flag
	}
	if v := strings.TrimSpace(getenv(s.env)); v != "" {
		return v, s.env
	}
	if v := file[s.key]; v != "" && s.key != "" {
		return v, s.key
	}
	return s.def, s.env
}

// resolveLLM fills what depends on the provider: the model's default, and
// the vendors' own OPENAI_API_KEY and ANTHROPIC_API_KEY when no key was
// set. The vendors' variables come after the file's api_key: they are
// ambient fallbacks often set for other tools, while the file is Quarry's
// own explicit setting.
func resolveLLM(c *llm.Config, getenv func(string) string) {
	switch c.Provider {
	case llm.ProviderOpenAI:
		c.APIKey = cmp.Or(c.APIKey, strings.TrimSpace(getenv("OPENAI_API_KEY")))
		c.Model = cmp.Or(c.Model, llm.DefaultOpenAIModel)
	case llm.ProviderAnthropic:
		c.APIKey = cmp.Or(c.APIKey, strings.TrimSpace(getenv("ANTHROPIC_API_KEY")))
		c.Model = cmp.Or(c.Model, llm.DefaultAnthropicModel)
	}
}

// readFile reads a QUARRY_CONFIG file into its values by key: an object
// gives dotted keys ("llm.timeout"), a list is joined with commas, a number
// or a boolean is written as text, and null is no value. A key no setting
// has is an error naming it, so a misspelt key never passes unseen. from
// names the setting that gave the path, for the error.
func readFile(path, from string) (map[string]string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, &fault.Error{Code: fault.EInvalid, Message: "cannot read the QUARRY_CONFIG file", Err: err,
			Fields: map[string]string{from: err.Error()}}
	}
	var keys []string
	for _, s := range settings() {
		if s.key != "" {
			keys = append(keys, s.key)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var top map[string]any
	values := map[string]string{}
	if err = dec.Decode(&top); err == nil {
		err = flatten("", top, keys, values)
	}
	if err != nil {
		return nil, &fault.Error{Code: fault.EInvalid, Message: "the QUARRY_CONFIG file is not a valid configuration",
			Fields: map[string]string{from: fmt.Sprintf("%s: %v", path, err)}}
	}
	return values, nil
}

// flatten adds obj's values to out under prefix+key, checking each key
// against keys.
func flatten(prefix string, obj map[string]any, keys []string, out map[string]string) error {
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		key := prefix + k
		if inner, ok := obj[k].(map[string]any); ok && slices.ContainsFunc(keys, func(s string) bool { return strings.HasPrefix(s, key+".") }) {
			if err := flatten(key+".", inner, keys, out); err != nil {
				return err
			}
			continue
		}
		if !slices.Contains(keys, key) {
			return fmt.Errorf("unknown key %q", key)
		}
		v, err := scalar(obj[k])
		if err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		out[key] = v
	}
	return nil
}

// scalar writes a JSON value as a setting's text.
func scalar(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return strings.TrimSpace(v), nil
	case json.Number:
		return v.String(), nil
	case bool:
		return strconv.FormatBool(v), nil
	case []any:
		parts := make([]string, len(v))
		for i, e := range v {
			s, ok := e.(string)
			if !ok {
				return "", errors.New("want a list of strings")
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	default:
		return "", errors.New("want a string, a number, true or false, or a list of strings")
	}
}

// WriteSettings writes, for `quarry serve -h`, every setting named in only
// (by environment variable; all when empty) with its flag, environment
// variable, file key, default and what it sets.
func WriteSettings(w io.Writer, only ...string) error {
	var b strings.Builder
	for _, s := range selected(only) {
		var names []string
		if s.flag != "" {
			names = append(names, "--"+s.flag)
		}
		names = append(names, s.env)
		if s.key != "" {
			names = append(names, "file: "+s.key)
		}
		fmt.Fprintf(&b, "  %s (default: %s)\n    \t%s\n", strings.Join(names, ", "), plain(s.defaultText()), plain(s.doc))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// SettingsTable is the README's table of settings, in Markdown; a test
// keeps the README's copy the same.
func SettingsTable() string {
	var b strings.Builder
	b.WriteString("| flag | environment | `QUARRY_CONFIG` key | default | what it sets |\n|---|---|---|---|---|\n")
	for _, s := range settings() {
		fmt.Fprintf(&b, "| %s | `%s` | %s | %s | %s |\n", code("--"+s.flag, s.flag != ""), s.env, code(s.key, s.key != ""), s.defaultText(), s.doc)
	}
	return b.String()
}

// defaultText is the default as shown to people, in Markdown.
func (s setting) defaultText() string {
	switch {
	case s.shown != "":
		return s.shown
	case s.def != "":
		return "`" + s.def + "`"
	default:
		return "none"
	}
}

// code is s as Markdown code, or nothing when ok is false.
func code(s string, ok bool) string {
	if !ok {
		return ""
	}
	return "`" + s + "`"
}

// plain is Markdown text without its code marks, for a terminal.
func plain(s string) string { return strings.ReplaceAll(s, "`", "") }
