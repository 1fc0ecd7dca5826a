package app

import (
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
	"quarry/internal/notify"
	"quarry/internal/research"
	"quarry/internal/skills/embed"
	"quarry/internal/skills/llm"
	"quarry/internal/store"
)

// Defaults used when no flag, environment variable or file sets a value.
// The address is loopback-only because Quarry is a single-user app with no
// login.
const (
	DefaultAddr = "127.0.0.1:8080"
	DefaultDB   = "./quarry.db"
)

// Log formats accepted by QUARRY_LOG_FORMAT and --log-format.
const (
	LogText = "text" // key=value lines, for people reading a terminal or a journal
	LogJSON = "json" // one JSON object a line, for log collectors
)

// Config is every setting of a Quarry server: the one struct Load fills
// from flags, the environment, the QUARRY_CONFIG file and the defaults
// (settings.go lists each setting with its flag, variable, file key and
// default). It is a plain value, never read from globals, so tests build
// one directly; the zero value of every field but Addr and DB is its
// default.
type Config struct {
	// Addr is the TCP address to listen on; port 0 picks a free port,
	// which tests use.
	Addr string
	// DB is the SQLite database path (and, on PostgreSQL, where uploads
	// are spooled beside: DB + "-uploads").
	DB string
	// DatabaseURL, when set (QUARRY_DATABASE_URL, a postgres:// URL), runs
	// the whole application on PostgreSQL instead of the SQLite file DB;
	// several replicas may share it (docs/scaling.md).
	DatabaseURL string
	// SessionKey is the secret behind session cookies (environment only,
	// so it never shows in a process list). Empty means a key generated on
	// first start and kept in the database.
	SessionKey string
	// PublicURL is the address people reach Quarry at, e.g.
	// https://quarry.example.org when a proxy in front terminates TLS.
	// Quarry itself only sees plain HTTP then, so it cannot tell that
	// browsers use HTTPS; an https public URL is how the operator says so,
	// and the session cookie (which carries the CSRF token) is then marked
	// Secure (sent over HTTPS only); the CSRF check also trusts it as an
	// origin. Empty means Quarry is reached directly.
	PublicURL string
	// OpenMode runs without accounts (QUARRY_OPEN_MODE): anyone who can
	// reach the server may do anything, decisions record the name each
	// browser gives, and the API's decided_by is honoured. For a personal
	// installation and scripts; the default is accounts (handlers.Deps).
	OpenMode bool
	// OIDC is single sign-on through an OpenID Connect provider; an empty
	// Issuer means none.
	OIDC OIDC
	// File is the QUARRY_CONFIG file the settings were read from, if any.
	File string
	// LogFormat is LogText or LogJSON; empty means LogText.
	LogFormat string
	// LogLevel is the least severe level logged; the zero value is Info.
	LogLevel slog.Level
	// Database is how the database meets another writer and a cap on its
	// size.
	Database Database
	// Search is what the search workflow searches and which model its
	// skills ask.
	Search Search
	// ExclusionReasons are the reasons the review offers for excluding a
	// paper, in order (keys 1–9 choose the first nine); empty means
	// research.DefaultExclusionReasons.
	ExclusionReasons []string

	// StopWindow is k of the "no relevant paper in the last k screened"
	// stopping suggestion on the review page (research.WindowOf); 0 means
	// research.DefaultStopWindow, 50: two review pages at the default 25
	// papers an iteration, and the smallest run of irrelevant records
	// that common screening guidance (ASReview's) suggests.
	StopWindow int
	// WorkflowsDir is a directory of workflow definition files (*.yaml,
	// *.yml; docs/workflows.md): /workflows lists each beside the built-in
	// workflows, drawn when it is valid and with its errors when not, so a
	// team sees at once what a file it wrote means. Empty means none. It is
	// read when listed, so an edited file shows without a restart.
	WorkflowsDir string
	// WebhookHosts is the allowlist of hosts a workflow's webhook stages
	// may call ("host" on any port, "host:port" that port
	// only; def.HostAllowed): nothing else is ever fetched by a workflow.
	// Empty means none, so a definition with a webhook stage is invalid.
	WebhookHosts []string
	// WebhookSecrets are the values `{{ secrets.NAME }}` fills in webhook
	// requests, read from the file QUARRY_WEBHOOK_SECRETS_FILE names (one
	// NAME=value a line). Never serialised, logged or shown: the webhook
	// caller also removes them from its errors.
	WebhookSecrets map[string]string `json:"-"`
	// ExportDir is where workflows' export actions write their files
	// (actions.Runner); empty means export actions fail, recorded.
	ExportDir string
	// SMTP is the mail server notify actions send e-mail through; an empty
	// Addr means e-mail notices fail, recorded.
	SMTP notify.SMTP
	// BranchWorkers bounds the branches of parallel stages running at
	// once, across runs (store.QueueOptions.BranchWorkers); 0 means
	// store.DefaultBranchWorkers.
	BranchWorkers int
	// JobRescueAfter is how long a job may run before it is taken for
	// abandoned by a dead process and run again
	// (store.QueueOptions.RescueAfter); 0 means store.DefaultRescueAfter.
	JobRescueAfter time.Duration
	// MaxActiveRuns bounds the runs executing at once, of every workflow;
	// WorkflowLimits bounds them per workflow name (store.RunLimits).
	// Zero and empty: no limit but the job workers.
	MaxActiveRuns  int
	WorkflowLimits map[string]int
	// Import bounds what reading one file may cost (its Limits and Gzip;
	// the other fields are per file): library uploads, files attached to
	// runs and `quarry import`. Zero fields mean the defaults.
	Import codecs.Options
}

// DefaultOIDCName is the provider's name on the sign-in page when
// QUARRY_OIDC_NAME gives none.
const DefaultOIDCName = "single sign-on"

// OIDC is single sign-on through an OpenID Connect provider
// (handlers.OIDCConfig); an empty Issuer turns it off.
type OIDC struct {
	// Issuer is the provider's issuer URL, where its discovery document
	// is (Issuer + "/.well-known/openid-configuration").
	Issuer string
	// ClientID and ClientSecret are what the provider gave Quarry when it
	// was registered there; the secret is never serialised or logged.
	ClientID     string
	ClientSecret string `json:"-"`
	// Name labels the sign-in button; empty means DefaultOIDCName.
	Name string
	// CreateAccounts creates an account for a person the provider signs
	// in who has none (with an e-mail it verified); false admits only
	// people who have an account already.
	CreateAccounts bool
}

// OIDCRedirectURL is where the provider sends browsers back to: the
// public URL's (or else the listening address's) /login/oidc/callback.
func (c Config) OIDCRedirectURL() string {
	base := strings.TrimSuffix(c.PublicURL, "/")
	if base == "" {
		base = "http://" + c.Addr
	}
	return base + "/login/oidc/callback"
}

// Database tunes the store (see store.Options): zero fields mean the
// defaults.
type Database struct {
	// BusyTimeout is how long a write waits for another process's lock.
	BusyTimeout time.Duration
	// MaxBytes caps the database file; 0 is no cap.
	MaxBytes int64
	// ImportReserve is the free space imports leave on the disk; 0 is the
	// default, negative turns the check off.
	ImportReserve int64
	// BackupDir is where backups go; empty is "backups" beside the
	// database.
	BackupDir string
	// BackupKeep is how many backups are kept; 0 is the default.
	BackupKeep int
	// PgDump is the pg_dump program backups on PostgreSQL run (empty:
	// found on PATH); PgBackupConfirmed, the schema version the operator
	// backed up by other means (store.Options).
	PgDump            string
	PgBackupConfirmed int
	// LibraryRanking is store.Options.LibraryRanking.
	LibraryRanking string
}

// StoreOptions are the store's options for this configuration, logging
// to log: the server and every subcommand open the database alike.
func (c Config) StoreOptions(log *slog.Logger) store.Options {
	o := store.Options{Logger: log, BusyTimeout: c.Database.BusyTimeout, MaxBytes: c.Database.MaxBytes, ImportReserve: c.Database.ImportReserve,
		BackupDir: c.Database.BackupDir, BackupKeep: c.Database.BackupKeep,
		PgDump: c.Database.PgDump, PgBackupConfirmed: int64(c.Database.PgBackupConfirmed),
		LibraryRanking: c.Database.LibraryRanking}
	if c.DatabaseURL != "" && o.BackupDir == "" {
		// pg_dump's archives go where the SQLite file's backups would.
		o.BackupDir = store.DefaultBackupDir(c.DB)
	}
	return o
}

// Search says which sources a deployment searches, how to reach them and
// which language model the skills use; NewSearch builds the workflow from
// it.
type Search struct {
	// Sources are the enabled source names; empty means just "local", the
	// one source that needs no network or account.
	Sources []string
	// ContactEmail is sent to APIs with polite pools (OpenAlex, Crossref,
	// PubMed), which serve identified clients faster and contact them
	// before blocking.
	ContactEmail       string
	SemanticScholarKey string
	SerpAPIKey         string
	OpenAlexKey        string
	PubMedKey          string
	// BaseURLs override a source's API root by source name (tests point
	// them at httptest servers; mirrors and proxies use them too).
	BaseURLs map[string]string
	// SourceDeadline bounds all of one source's queries in one search
	// (searcher.Options.SourceDeadline); zero means its default, 30s.
	SourceDeadline time.Duration
	// StrategyCheckpoint is the default of the strategy_checkpoint run
	// parameter (nil means true).
	StrategyCheckpoint *bool
	// LLM selects the model behind the intent parser, query builder and
	// scorer (offline heuristics by default). llm.Config never serialises
	// its API key.
	LLM llm.Config
	// Embed selects the embeddings model behind semantic retrieval
	// (none by default). embed.Config never serialises its API key.
	Embed embed.Config
}

// SecureCookies reports whether cookies must be marked Secure: the public
// URL is https. Call it on a validated config.
func (c Config) SecureCookies() bool {
	u, err := url.Parse(c.PublicURL)
	return err == nil && strings.EqualFold(u.Scheme, "https")
}

// Validate reports every problem with the config as a fault.EInvalid
// error with one entry per field. Load calls it, and so does New, for a
// Config built in code.
func (c Config) Validate() error {
	fe := fault.FieldErrors{}
	if c.Addr == "" {
		fe.Add("addr", "address is required")
	} else if _, port, err := net.SplitHostPort(c.Addr); err != nil {
		fe.Add("addr", "address must be host:port: "+err.Error())
	} else if port == "" {
		fe.Add("addr", "address needs a port (use 0 for any free port)")
	}
	if c.SessionKey != "" && len(c.SessionKey) < 32 {
		fe.Add("session_key", "QUARRY_SESSION_KEY must be at least 32 characters")
	}
	if strings.TrimSpace(c.DB) == "" {
		fe.Add("db", "database path is required")
	}
	if c.DatabaseURL != "" && !store.IsPostgresDSN(c.DatabaseURL) {
		fe.Add("database_url", "QUARRY_DATABASE_URL must be a postgres:// or postgresql:// URL")
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		switch {
		case err != nil:
			fe.Add("public_url", "QUARRY_PUBLIC_URL is not a URL: "+err.Error())
		case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"), u.Host == "":
			fe.Add("public_url", "QUARRY_PUBLIC_URL must be an http:// or https:// address with a host, e.g. https://quarry.example.org")
		}
	}
	c.OIDC.check(fe, c.OpenMode)
	if c.LogFormat != "" && c.LogFormat != LogText && c.LogFormat != LogJSON {
		fe.Add("log_format", fmt.Sprintf("%q is not %s or %s", c.LogFormat, LogText, LogJSON))
	}
	if c.StopWindow < 0 {
		fe.Add("stop_window", fmt.Sprintf("%d is not a number of papers; use 1 or more (0: the default)", c.StopWindow))
	}
	c.Search.check(fe)
	checkExclusionReasons(fe, c.ExclusionReasons)
	return fe.Err("invalid configuration")
}

// MaxExclusionReasons bounds the configured exclusion reasons: a list to
// choose from at a glance, of which keys 1–9 reach the first nine.
const MaxExclusionReasons = 20

// checkExclusionReasons adds a problem with the configured exclusion
// reasons to fe: too many, or one longer than a mark's reason may be.
func checkExclusionReasons(fe fault.FieldErrors, reasons []string) {
	if len(reasons) > MaxExclusionReasons {
		fe.Add("exclusion_reasons", fmt.Sprintf("%d exclusion reasons; at most %d", len(reasons), MaxExclusionReasons))
	}
	for i, r := range reasons {
		if n := utf8.RuneCountInString(r); n > research.MaxMarkReason {
			fe.Add(fmt.Sprintf("exclusion_reasons[%d]", i), fmt.Sprintf("the reason has %d characters; at most %d", n, research.MaxMarkReason))
		}
	}
}

// enabled returns the configured source names, defaulted and checked.
func (s Search) enabled() ([]string, error) {
	fe := fault.FieldErrors{}
	names := s.check(fe)
	return names, fe.Err("invalid search configuration")
}

// check adds the search settings' problems to fe and returns the enabled
// source names, defaulted to "local" and without repeats.
func (s Search) check(fe fault.FieldErrors) []string {
	names := s.Sources
	if len(names) == 0 {
		names = []string{research.SourceLocal}
	}
	known := research.Sources()
	var out []string
	for i, n := range names {
		n = strings.TrimSpace(n)
		switch {
		case !slices.Contains(known, n):
			fe.Add(fmt.Sprintf("sources[%d]", i), fmt.Sprintf("unknown source %q (known: %s)", n, strings.Join(known, ", ")))
		case slices.Contains(out, n):
		default:
			out = append(out, n)
		}
	}
	for name := range s.BaseURLs {
		if !slices.Contains(known, name) {
			fe.Add("base_urls."+name, fmt.Sprintf("unknown source %q", name))
		}
	}
	if s.Embed.Enabled() {
		if _, err := embed.New(s.Embed); err != nil {
			fe.Add("embed", fault.ErrorMessage(err))
		}
	}
	if slices.Contains(out, research.SourceOpenAlex) && strings.TrimSpace(s.OpenAlexKey) == "" {
		// OpenAlex has required a key since 13 February 2026: without one
		// the daily allowance is about ten searches, after which every
		// search of every run fails.
		fe.Add("openalex_key", "openalex is enabled but has no API key (OpenAlex requires one; a free key is at https://openalex.org/settings/api): set QUARRY_OPENALEX_KEY or disable it")
	}
	if slices.Contains(out, research.SourceSerpAPIScholar) && strings.TrimSpace(s.SerpAPIKey) == "" {
		fe.Add("serpapi_key", "serpapi_scholar is enabled but has no API key: set QUARRY_SERPAPI_KEY or disable it")
	}
	return out
}

// check adds the single-sign-on settings' problems to fe: an issuer that
// is not an http(s) URL, or one without the client ID and secret that
// every code exchange needs (found now rather than at the first sign-in).
func (o OIDC) check(fe fault.FieldErrors, openMode bool) {
	if o.Issuer == "" {
		if o.ClientID != "" || o.ClientSecret != "" {
			fe.Add("oidc.issuer", "QUARRY_OIDC_CLIENT_ID or QUARRY_OIDC_CLIENT_SECRET is set but QUARRY_OIDC_ISSUER is not: set the provider's issuer URL for single sign-on, or unset them")
		}
		return
	}
	if u, err := url.Parse(o.Issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fe.Add("oidc.issuer", fmt.Sprintf("QUARRY_OIDC_ISSUER %q is not an http(s) URL such as https://accounts.google.com", o.Issuer))
	}
	if strings.TrimSpace(o.ClientID) == "" {
		fe.Add("oidc.client_id", "QUARRY_OIDC_ISSUER is set but QUARRY_OIDC_CLIENT_ID is not: single sign-on needs the client ID the provider gave Quarry")
	}
	if strings.TrimSpace(o.ClientSecret) == "" {
		fe.Add("oidc.client_secret", "QUARRY_OIDC_ISSUER is set but QUARRY_OIDC_CLIENT_SECRET is not: single sign-on needs the client secret the provider gave Quarry")
	}
	if openMode {
		fe.Add("oidc.issuer", "QUARRY_OIDC_ISSUER has no use in open mode (QUARRY_OPEN_MODE=true), which has no accounts to sign in to")
	}
}

// DSN is what the store opens: the PostgreSQL URL when one is set, else
// the SQLite file.
func (c Config) DSN() string {
	if c.DatabaseURL != "" {
		return c.DatabaseURL
	}
	return c.DB
}
