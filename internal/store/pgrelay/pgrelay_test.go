package pgrelay_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"quarry/internal/engine"
	"quarry/internal/pgtest"
	"quarry/internal/store/pgrelay"
)

var pg pgtest.Shared

func TestMain(m *testing.M) { os.Exit(pg.Run(m)) }

// replica is one process's broker with its relay running.
func replica(t *testing.T, url, name string) *engine.Broker {
	t.Helper()
	pool, err := pgxpool.New(t.Context(), url)
	require.NoError(t, err)
	t.Cleanup(pool.Close)
	b := engine.NewBroker()
	r := pgrelay.New(pool, b, name, nil)
	b.RelayTo(r.Forward)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = r.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return b
}

// TestRelayBetweenReplicas: an event published on one replica reaches the
// subscribers of another, once, and is not echoed back to its own.
func TestRelayBetweenReplicas(t *testing.T) {
	t.Parallel()
	url := pg.NewDatabase(t)
	a, b := replica(t, url, "a"), replica(t, url, "b")
	onA, stopA := a.Subscribe("run1")
	defer stopA()
	onB, stopB := b.Subscribe("run1")
	defer stopB()
	other, stopOther := b.Subscribe("run2")
	defer stopOther()

	// b listens once its connection has run LISTEN: publish until it hears.
	var got engine.Event
	require.Eventually(t, func() bool {
		a.Publish(engine.Event{Type: engine.EventProgress, RunID: "run1", Message: "warming up"})
		select {
		case got = <-onB:
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}, 20*time.Second, time.Millisecond)
	require.Equal(t, "warming up", got.Message)

	drain := func(ch <-chan engine.Event) {
		for {
			select {
			case <-ch:
			case <-time.After(300 * time.Millisecond):
				return
			}
		}
	}
	drain(onA)
	drain(onB)
	a.Publish(engine.Event{Type: engine.EventStatus, RunID: "run1", Status: engine.StatusWaiting, Step: "review", Data: map[string]any{"n": 3}})
	select {
	case got = <-onB:
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica did not get the event")
	}
	require.Equal(t, engine.StatusWaiting, got.Status)
	require.Equal(t, "review", got.Step)
	require.Equal(t, map[string]any{"n": float64(3)}, got.Data, "data arrives as JSON")
	select {
	case ev := <-onA:
		require.Equal(t, engine.StatusWaiting, ev.Status, "the publisher's own subscriber gets it once, locally")
	case <-time.After(time.Second):
		t.Fatal("the publishing replica's subscriber missed its own event")
	}
	select {
	case ev := <-onA:
		t.Fatalf("echoed back to the publisher: %+v", ev)
	case ev := <-other:
		t.Fatalf("another run's subscriber got it: %+v", ev)
	case <-time.After(500 * time.Millisecond):
	}
}

// TestLargeEventsAreCut: PostgreSQL refuses notifications of 8,000 bytes
// or more; a larger event goes without its data, then with its message cut.
func TestLargeEventsAreCut(t *testing.T) {
	t.Parallel()
	url := pg.NewDatabase(t)
	a, b := replica(t, url, "a"), replica(t, url, "b")
	onB, stop := b.Subscribe("")
	defer stop()
	big := strings.Repeat("é", 6000)
	require.Eventually(t, func() bool {
		a.Publish(engine.Event{Type: engine.EventProgress, RunID: "r", Message: big, Data: strings.Repeat("x", 20000)})
		select {
		case ev := <-onB:
			require.Nil(t, ev.Data)
			require.True(t, strings.HasPrefix(big, strings.TrimSuffix(ev.Message, "…")), "cut at a character")
			raw, err := json.Marshal(ev)
			require.NoError(t, err)
			require.Less(t, len(raw), 8000, fmt.Sprint(len(raw)))
			return true
		case <-time.After(50 * time.Millisecond):
			return false
		}
	}, 20*time.Second, time.Millisecond)
}
