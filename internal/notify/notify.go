// Package notify sends a workflow's notices: a JSON POST to an incoming
// webhook (Slack's and Teams' incoming webhooks both take {"text": …})
// and an e-mail over SMTP when one is configured. Like internal/webhook it
// sends only to hosts on the webhook allowlist, follows no redirect and
// keeps the webhook URL's path (which, for Slack and Teams, is the
// secret) out of its errors. The engine never imports it: the app adapts
// it to flow.Actions (and to gate notices).
package notify

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"

	"quarry/internal/engine/def"
	"quarry/internal/fault"
)

// DefaultTimeout bounds one webhook call or one SMTP conversation.
const DefaultTimeout = 15 * time.Second

// Notice is one message: Text posted to Webhook when set and mailed to
// Email when set (Subject as the mail's subject).
type Notice struct {
	Webhook string
	Email   []string
	Subject string
	Text    string
}

// SMTP is the mail server notices are sent through (QUARRY_SMTP_*); an
// empty Addr means e-mail is not configured. User and Password, when
// set, authenticate with PLAIN, which net/smtp allows only over TLS
// (STARTTLS, used whenever the server offers it) or to localhost.
type SMTP struct {
	Addr     string // host:port
	From     string
	User     string
	Password string `json:"-"`
}

// Sender sends notices. The zero value refuses every webhook host and
// has no mail server.
type Sender struct {
	// Hosts is the webhook allowlist (QUARRY_WEBHOOK_HOSTS; def.HostAllowed).
	Hosts []string
	SMTP  SMTP
	// Client posts to webhooks; nil means one with DefaultTimeout. Its
	// redirect policy is replaced: no redirect is followed.
	Client *http.Client
	// Timeout bounds an SMTP conversation (0: DefaultTimeout).
	Timeout time.Duration
	// TLS configures STARTTLS (nil: verify the server's name); tests
	// trust their own server with it.
	TLS *tls.Config
}

// Send posts and mails n; both are tried, and a failure of either is
// returned (joined).
func (s *Sender) Send(ctx context.Context, n Notice) error {
	if n.Webhook == "" && len(n.Email) == 0 {
		return fault.Errorf(fault.EInvalid, "notify: a notice needs a webhook or an e-mail address")
	}
	var errs []error
	if n.Webhook != "" {
		errs = append(errs, s.Post(ctx, n.Webhook, n.Text))
	}
	if len(n.Email) > 0 {
		errs = append(errs, s.Mail(ctx, n.Email, n.Subject, n.Text))
	}
	return errors.Join(errs...)
}

// Body is the JSON a notice posts: {"text": …}, which Slack incoming
// webhooks and Teams incoming webhooks (the Office 365 connector) both
// show as the message.
type Body struct {
	Text string `json:"text"`
}

// Post sends text to an incoming webhook on an allowed host; any answer
// but 2xx is an error.
func (s *Sender) Post(ctx context.Context, raw, text string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fault.Errorf(fault.EInvalid, "notify: webhook %q is not an http or https URL", redact(raw))
	}
	if !def.HostAllowed(s.Hosts, u) {
		return fault.Errorf(fault.EInvalid, "notify: webhook host %q is not in the webhook allowlist (QUARRY_WEBHOOK_HOSTS)", u.Host)
	}
	body, err := json.Marshal(Body{Text: text})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("notify: %s", redact(err.Error()))
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.client().Do(req)
	if err != nil {
		return fmt.Errorf("notify: webhook %s: %s", origin(u), redactURL(err, u))
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Errorf("notify: webhook %s answered %d", origin(u), resp.StatusCode)
	}
	return nil
}

// client is the configured client, else one with its own transport that
// keeps no connection open: notices are rare, and a shared transport is
// one whose idle connections anyone may close mid-request (httptest's
// Close does, for http.DefaultTransport).
func (s *Sender) client() *http.Client {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.DisableKeepAlives = true
	c := http.Client{Timeout: DefaultTimeout, Transport: tr}
	if s.Client != nil {
		c = *s.Client
	}
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &c
}

// origin is scheme://host: where a call went, without the secret path.
func origin(u *url.URL) string { return u.Scheme + "://" + u.Host }

// redactURL is err's text with the full URL replaced by its origin.
func redactURL(err error, u *url.URL) string {
	return strings.ReplaceAll(err.Error(), u.String(), origin(u)+"/…")
}

// redact keeps only the scheme and host of anything that looks like a URL.
func redact(s string) string {
	if u, err := url.Parse(s); err == nil && u.Host != "" {
		return origin(u) + "/…"
	}
	return s
}

// Mail sends text to the addresses through the configured SMTP server.
func (s *Sender) Mail(ctx context.Context, to []string, subject, text string) error {
	if s.SMTP.Addr == "" || s.SMTP.From == "" {
		return fault.Errorf(fault.EInvalid, "notify: e-mail is not configured (QUARRY_SMTP_ADDR and QUARRY_SMTP_FROM)")
	}
	from, err := mail.ParseAddress(s.SMTP.From)
	if err != nil {
		return fault.Errorf(fault.EInvalid, "notify: QUARRY_SMTP_FROM %q: %v", s.SMTP.From, err)
	}
	var rcpt []string
	for _, a := range to {
		addr, err := mail.ParseAddress(a)
		if err != nil {
			return fault.Errorf(fault.EInvalid, "notify: e-mail address %q: %v", a, err)
		}
		rcpt = append(rcpt, addr.Address)
	}
	if subject == "" {
		subject = "Quarry"
	}
	if strings.ContainsAny(subject, "\r\n") {
		return fault.Errorf(fault.EInvalid, "notify: the subject must be one line")
	}
	msg := message(from, rcpt, subject, text)
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := (&net.Dialer{}).DialContext(ctx, "tcp", s.SMTP.Addr)
	if err != nil {
		return fmt.Errorf("notify: smtp %s: %w", s.SMTP.Addr, err)
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	host, _, _ := net.SplitHostPort(s.SMTP.Addr)
	if err := s.converse(conn, host, from.Address, rcpt, msg); err != nil {
		return fmt.Errorf("notify: smtp %s: %w", s.SMTP.Addr, err)
	}
	return nil
}

// converse is one SMTP session: STARTTLS when offered, AUTH when
// configured, one message.
func (s *Sender) converse(conn net.Conn, host, from string, to []string, msg []byte) error {
	c, err := smtp.NewClient(conn, host)
	if err != nil {
		return err
	}
	defer c.Close()
	if ok, _ := c.Extension("STARTTLS"); ok {
		cfg := &tls.Config{ServerName: host, MinVersion: tls.VersionTLS12}
		if s.TLS != nil {
			cfg = s.TLS.Clone()
		}
		if err := c.StartTLS(cfg); err != nil {
			return err
		}
	}
	if s.SMTP.User != "" {
		if err := c.Auth(smtp.PlainAuth("", s.SMTP.User, s.SMTP.Password, host)); err != nil {
			return err
		}
	}
	if err := c.Mail(from); err != nil {
		return err
	}
	for _, r := range to {
		if err := c.Rcpt(r); err != nil {
			return err
		}
	}
	w, err := c.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(msg); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return c.Quit()
}

// message is a plain-text mail: headers, a blank line, text with CRLF
// line ends.
func message(from *mail.Address, to []string, subject, text string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "From: %s\r\n", from.String())
	fmt.Fprintf(&b, "To: %s\r\n", strings.Join(to, ", "))
	fmt.Fprintf(&b, "Subject: %s\r\n", mimeHeader(subject))
	b.WriteString("MIME-Version: 1.0\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n")
	b.WriteString(strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\n", "\r\n"))
	b.WriteString("\r\n")
	return []byte(b.String())
}

// mimeHeader encodes a non-ASCII subject (RFC 2047).
func mimeHeader(s string) string {
	for _, r := range s {
		if r > 127 {
			return mimeQ.Encode("utf-8", s)
		}
	}
	return s
}

var mimeQ = mime.QEncoding
