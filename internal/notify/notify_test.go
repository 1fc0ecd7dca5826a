package notify_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/fault"
	"quarry/internal/notify"
	"quarry/internal/notify/notifytest"
)

func TestPostSendsSlackAndTeamsText(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+" "+r.Header.Get("Content-Type")+" "+string(b))
		mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/down") {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
	}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	s := &notify.Sender{Hosts: []string{u.Host}}
	ctx := context.Background()
	require.NoError(t, s.Send(ctx, notify.Notice{Webhook: srv.URL + "/services/T0/B0/secret", Text: "3 papers \"exported\""}))
	mu.Lock()
	require.Equal(t, []string{`POST /services/T0/B0/secret application/json {"text":"3 papers \"exported\""}`}, got)
	mu.Unlock()

	err := s.Send(ctx, notify.Notice{Webhook: srv.URL + "/down/secret-token/down", Text: "x"})
	require.ErrorContains(t, err, "answered 503")
	require.NotContains(t, err.Error(), "secret-token", "the webhook's path is its secret")

	// A host off the allowlist is refused before any request.
	err = (&notify.Sender{Hosts: []string{"hooks.example.org"}}).Send(ctx, notify.Notice{Webhook: srv.URL + "/x", Text: "x"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.ErrorContains(t, err, "not in the webhook allowlist")
	mu.Lock()
	require.Len(t, got, 2)
	mu.Unlock()

	// Unreachable: the error names the origin only.
	err = (&notify.Sender{Hosts: []string{"127.0.0.1"}}).Post(ctx, "http://127.0.0.1:1/hook/secret-token", "x")
	require.Error(t, err)
	require.NotContains(t, err.Error(), "secret-token")
}

func TestMailThroughSMTP(t *testing.T) {
	t.Parallel()
	addr, mails := notifytest.SMTP(t)
	s := &notify.Sender{SMTP: notify.SMTP{Addr: addr, From: "Quarry <quarry@example.org>"}}
	require.NoError(t, s.Send(context.Background(), notify.Notice{Email: []string{"ada@example.org", "Grace <grace@example.org>"},
		Subject: "Run finished", Text: "2 papers\nkept"}))
	m := <-mails
	require.Equal(t, "<quarry@example.org> BODY=8BITMIME", m.From)
	require.Equal(t, []string{"<ada@example.org>", "<grace@example.org>"}, m.To)
	data := m.Data
	require.Contains(t, data, "From: \"Quarry\" <quarry@example.org>\r\n")
	require.Contains(t, data, "To: ada@example.org, grace@example.org\r\n")
	require.Contains(t, data, "Subject: Run finished\r\n")
	require.True(t, strings.HasSuffix(data, "\r\n\r\n2 papers\r\nkept\r\n"), "%q", data)

	// Not configured, a bad address, a subject that would inject headers:
	// refused, nothing sent.
	ctx := context.Background()
	require.ErrorContains(t, (&notify.Sender{}).Mail(ctx, []string{"ada@example.org"}, "s", "t"), "QUARRY_SMTP_ADDR")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(s.Mail(ctx, []string{"not an address"}, "s", "t")))
	require.Equal(t, fault.EInvalid, fault.ErrorCode(s.Mail(ctx, []string{"ada@example.org"}, "s\r\nBcc: eve@example.org", "t")))
	require.Empty(t, mails)
}

func TestBodyIsTheWebhookJSON(t *testing.T) {
	t.Parallel()
	b, err := json.Marshal(notify.Body{Text: "hi"})
	require.NoError(t, err)
	require.JSONEq(t, `{"text": "hi"}`, string(b))
}
