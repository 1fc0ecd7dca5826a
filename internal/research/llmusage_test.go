package research_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"quarry/internal/research"
)

func TestLLMMeter(t *testing.T) {
	t.Parallel()
	require.Nil(t, research.LLMMeterOf(context.Background()), "no meter outside a run")
	require.Equal(t, context.Background(), research.WithLLMMeter(context.Background(), nil))

	var mu sync.Mutex
	var seen []research.LLMCall
	m := research.NewLLMMeter(research.LLMUsage{Calls: 2, TokensIn: 100, TokensOut: 10, Latency: time.Second},
		func(c research.LLMCall) { mu.Lock(); seen = append(seen, c); mu.Unlock() })
	ctx := research.WithLLMMeter(context.Background(), m)
	require.Same(t, m, research.LLMMeterOf(ctx))

	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			m.Record(research.LLMCall{Model: "openai/m", TokensIn: 50, TokensOut: 5, Latency: 250 * time.Millisecond})
		})
	}
	wg.Wait()
	u := m.Usage()
	require.Equal(t, research.LLMUsage{Calls: 6, TokensIn: 300, TokensOut: 30, Latency: 2 * time.Second}, u, "added to what the run spent before")
	require.Len(t, seen, 4)

	require.True(t, m.Allow(0), "no budget")
	require.True(t, m.Allow(331))
	require.False(t, m.Allow(330), "330 tokens spent")
	require.Equal(t, 1, m.Usage().Skipped)
	require.Equal(t, "Language model: 6 calls, 300 tokens in, 30 tokens out, 2s in all. 1 request not sent: the run's token budget was spent.",
		research.LLMUsageText(m.Usage()))
}
