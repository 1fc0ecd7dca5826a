package app

import (
	"flag"
	"net"
	"net/url"
	"quarry/internal/fault"
	"strings"
)

// Defaults used when neither a flag nor the environment sets a value. The
// address is loopback-only because Quarry is a single-user app with no login.
const (
	DefaultAddr = "127.0.0.1:8080"
	DefaultDB   = "./quarry.db"
)

// Config is everything the app needs to start. It is a plain value filled
// from the environment and then from flags, never read from globals, so
// tests can build one directly.
type Config struct {
	// Addr is the TCP address to listen on (QUARRY_ADDR, --addr); port 0
	// picks a free port, which tests use.
	Addr string
	// DB is the SQLite database path (QUARRY_DB, --db).
	DB string
	// SessionKey is the secret behind session cookies (QUARRY_SESSION_KEY,
	// environment only, so it never shows in a process list). Empty means
	// a key generated on first start and kept in the database.
	SessionKey string
	// PublicURL is the address people reach Quarry at (QUARRY_PUBLIC_URL,
	// --public-url), e.g. https://quarry.example.org when a proxy in front
	// terminates TLS. Quarry itself only sees plain HTTP then, so it cannot
	// tell that browsers use HTTPS; an https public URL is how the operator
	// says so, and the session and CSRF cookies are then marked Secure
	// (sent over HTTPS only). Empty means Quarry is reached directly.
	PublicURL string
}

// SecureCookies reports whether cookies must be marked Secure: the public
// URL is https. Call it on a validated config.
func (c Config) SecureCookies() bool {
	u, err := url.Parse(c.PublicURL)
	return err == nil && strings.EqualFold(u.Scheme, "https")
}

// ConfigFromEnv returns the defaults overridden by the QUARRY_* environment
// variables. getenv is passed in (usually os.Getenv) so tests control it.
func ConfigFromEnv(getenv func(string) string) Config {
	cfg := Config{Addr: DefaultAddr, DB: DefaultDB}
	if v := strings.TrimSpace(getenv("QUARRY_ADDR")); v != "" {
		cfg.Addr = v
	}
	if v := strings.TrimSpace(getenv("QUARRY_DB")); v != "" {
		cfg.DB = v
	}
	cfg.SessionKey = strings.TrimSpace(getenv("QUARRY_SESSION_KEY"))
	cfg.PublicURL = strings.TrimSpace(getenv("QUARRY_PUBLIC_URL"))
	return cfg
}

// BindFlags registers the config's flags on fs with the current values as
// defaults. Call it after ConfigFromEnv and before fs.Parse, so that flags
// override the environment, which overrides the defaults.
func (c *Config) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Addr, "addr", c.Addr, "address to listen on, host:port (env QUARRY_ADDR)")
	fs.StringVar(&c.DB, "db", c.DB, "path of the SQLite database (env QUARRY_DB)")
	fs.StringVar(&c.PublicURL, "public-url", c.PublicURL,
		"address people reach Quarry at, e.g. https://quarry.example.org behind a TLS proxy; https marks cookies Secure (env QUARRY_PUBLIC_URL)")
}

// Validate reports every problem with the config as an fault.EInvalid
// error with one entry per field.
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
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		switch {
		case err != nil:
			fe.Add("public_url", "QUARRY_PUBLIC_URL is not a URL: "+err.Error())
		case !strings.EqualFold(u.Scheme, "http") && !strings.EqualFold(u.Scheme, "https"), u.Host == "":
			fe.Add("public_url", "QUARRY_PUBLIC_URL must be an http:// or https:// address with a host, e.g. https://quarry.example.org")
		}
	}
	return fe.Err("invalid configuration")
}
