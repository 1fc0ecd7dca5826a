package research

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// LLMCall is one request a skill sent to a language model: who answered,
// the tokens the provider counted each way, and how long it took
// (retries of the request included).
type LLMCall struct {
	Model     string        `json:"model"`
	TokensIn  int64         `json:"tokens_in"`
	TokensOut int64         `json:"tokens_out"`
	Latency   time.Duration `json:"latency"`
}

// LLMUsage is what a run has spent on language models so far. The run
// keeps it in its state, so it adds up across steps and restarts and the
// run's token budget holds for the whole run.
type LLMUsage struct {
	Calls     int   `json:"calls"`
	TokensIn  int64 `json:"tokens_in"`
	TokensOut int64 `json:"tokens_out"`
	// Latency is the calls' time added up.
	Latency time.Duration `json:"latency"`
	// Skipped counts the requests not sent because the budget was spent.
	Skipped int `json:"skipped,omitempty"`
}

// LLMUsageText says u in a sentence, the one way the run page and the
// report write it.
func LLMUsageText(u LLMUsage) string {
	s := fmt.Sprintf("Language model: %d %s, %d tokens in, %d tokens out, %s in all.",
		u.Calls, plural(u.Calls, "call", "calls"), u.TokensIn, u.TokensOut, u.Latency.Round(time.Millisecond))
	if u.Skipped > 0 {
		s += fmt.Sprintf(" %d %s not sent: the run's token budget was spent.", u.Skipped, plural(u.Skipped, "request", "requests"))
	}
	return s
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Tokens is the tokens spent both ways, what a budget counts.
func (u LLMUsage) Tokens() int64 { return u.TokensIn + u.TokensOut }

// Plus is u and v added up.
func (u LLMUsage) Plus(v LLMUsage) LLMUsage {
	return LLMUsage{Calls: u.Calls + v.Calls, TokensIn: u.TokensIn + v.TokensIn, TokensOut: u.TokensOut + v.TokensOut,
		Latency: u.Latency + v.Latency, Skipped: u.Skipped + v.Skipped}
}

// Minus is what u spent beyond v (u started from v).
func (u LLMUsage) Minus(v LLMUsage) LLMUsage {
	return LLMUsage{Calls: u.Calls - v.Calls, TokensIn: u.TokensIn - v.TokensIn, TokensOut: u.TokensOut - v.TokensOut,
		Latency: u.Latency - v.Latency, Skipped: u.Skipped - v.Skipped}
}

// LLMMeter adds up one run's LLM calls during a step, starting from what
// the run spent before; skills running in parallel share it.
type LLMMeter struct {
	mu     sync.Mutex
	usage  LLMUsage
	onCall func(LLMCall)
}

// NewLLMMeter returns a meter that starts at prev and hands every call to
// onCall (nil for none), e.g. to publish it as progress.
func NewLLMMeter(prev LLMUsage, onCall func(LLMCall)) *LLMMeter {
	return &LLMMeter{usage: prev, onCall: onCall}
}

// Record adds a call.
func (m *LLMMeter) Record(c LLMCall) {
	m.mu.Lock()
	m.usage.Calls++
	m.usage.TokensIn += c.TokensIn
	m.usage.TokensOut += c.TokensOut
	m.usage.Latency += c.Latency
	m.mu.Unlock()
	if m.onCall != nil {
		m.onCall(c)
	}
}

// Allow reports whether a request may be sent under budget tokens (zero
// or less: no budget), counting a refused one as skipped.
func (m *LLMMeter) Allow(budget int64) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if budget <= 0 || m.usage.Tokens() < budget {
		return true
	}
	m.usage.Skipped++
	return false
}

// Usage is the run's usage so far.
func (m *LLMMeter) Usage() LLMUsage {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.usage
}

type meterKey struct{}

// WithLLMMeter returns a context carrying m, for the providers the step's
// skills call; a nil m returns ctx unchanged.
func WithLLMMeter(ctx context.Context, m *LLMMeter) context.Context {
	if m == nil {
		return ctx
	}
	return context.WithValue(ctx, meterKey{}, m)
}

// LLMMeterOf returns the meter ctx carries, nil when there is none (a
// tool or test calling a skill outside a run): nothing is then counted
// and no budget applies.
func LLMMeterOf(ctx context.Context) *LLMMeter {
	m, _ := ctx.Value(meterKey{}).(*LLMMeter)
	return m
}
