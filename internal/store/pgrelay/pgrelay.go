// Package pgrelay passes a run's live events between the replicas of one
// PostgreSQL installation with LISTEN/NOTIFY: a step runs on whichever
// replica River gave its job to, and a page watching the run may be served
// by another. Each replica's engine.Broker relays what it publishes here
// (Forward); every replica listens and delivers the others' events to its
// own subscribers (Run).
//
// Delivery is best effort, as in one process: pages re-read a run's state
// on a status event, so a lost event costs liveliness, never data.
package pgrelay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"quarry/internal/engine"
)

// Channel is the NOTIFY channel the replicas share.
const Channel = "quarry_events"

// maxPayload keeps a notification under PostgreSQL's 8,000-byte limit: a
// larger event is sent without its data (and with its message cut), which
// the page shows as the step's progress line all the same.
const maxPayload = 7900

// queueLen bounds the events waiting to be sent; past it they are dropped
// rather than holding up the engine.
const queueLen = 1024

// Delivery is where events from other replicas go: the local broker.
type Delivery interface{ Deliver(engine.Event) }

// Relay is one replica's end.
type Relay struct {
	pool    *pgxpool.Pool
	local   Delivery
	replica string
	log     *slog.Logger
	out     chan []byte
}

// envelope is a notification's payload: who sent the event, so a replica
// skips its own.
type envelope struct {
	Replica string       `json:"r"`
	Event   engine.Event `json:"e"`
}

// New returns the relay of the replica named replica (unique among the
// running ones) over pool, delivering the others' events to local.
func New(pool *pgxpool.Pool, local Delivery, replica string, log *slog.Logger) *Relay {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Relay{pool: pool, local: local, replica: replica, log: log, out: make(chan []byte, queueLen)}
}

// Forward queues ev for the other replicas; it never blocks (an event
// that finds the queue full is dropped). It is the broker's relay.
func (r *Relay) Forward(ev engine.Event) {
	payload, err := encode(r.replica, ev)
	if err != nil {
		r.log.Warn("event relay: cannot encode an event", "run", ev.RunID, "err", err)
		return
	}
	select {
	case r.out <- payload:
	default:
	}
}

// encode is ev's notification payload, made small enough to send.
func encode(replica string, ev engine.Event) ([]byte, error) {
	b, err := json.Marshal(envelope{Replica: replica, Event: ev})
	if err != nil || len(b) <= maxPayload {
		return b, err
	}
	ev.Data = nil
	if b, err = json.Marshal(envelope{Replica: replica, Event: ev}); err != nil || len(b) <= maxPayload {
		return b, err
	}
	over := len(b) - maxPayload
	if over >= len(ev.Message) {
		ev.Message = ""
	} else {
		cut := len(ev.Message) - over - len("…")
		for cut > 0 && cut < len(ev.Message) && ev.Message[cut]&0xC0 == 0x80 {
			cut-- // not inside a UTF-8 sequence
		}
		ev.Message = ev.Message[:max(cut, 0)] + "…"
	}
	return json.Marshal(envelope{Replica: replica, Event: ev})
}

// Run sends queued events and delivers the other replicas' until ctx
// ends, reconnecting its listening connection after a failure.
func (r *Relay) Run(ctx context.Context) error {
	go r.send(ctx)
	wait := 100 * time.Millisecond
	for {
		err := r.listen(ctx)
		if ctx.Err() != nil {
			return nil
		}
		r.log.Warn("event relay: listening stopped; reconnecting", "err", err, "in", wait)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(wait):
		}
		wait = min(2*wait, 5*time.Second)
	}
}

// listen holds one connection in LISTEN mode and delivers the other
// replicas' events until the connection or ctx ends.
func (r *Relay) listen(ctx context.Context) error {
	conn, err := r.pool.Acquire(ctx)
	if err != nil {
		return err
	}
	// The connection stays in LISTEN mode until it dies: it is not given
	// back to the pool, where another user would inherit the channel.
	pc := conn.Hijack()
	defer pc.Close(context.WithoutCancel(ctx))
	if _, err := pc.Exec(ctx, "LISTEN "+Channel); err != nil {
		return err
	}
	for {
		n, err := pc.WaitForNotification(ctx)
		if err != nil {
			return err
		}
		var env envelope
		if err := json.Unmarshal([]byte(n.Payload), &env); err != nil {
			r.log.Warn("event relay: unreadable notification", "err", err)
			continue
		}
		if env.Replica == r.replica {
			continue
		}
		r.local.Deliver(env.Event)
	}
}

// send NOTIFYs the queued events one by one; a failure is logged and the
// event dropped (best effort).
func (r *Relay) send(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case payload := <-r.out:
			if _, err := r.pool.Exec(ctx, "SELECT pg_notify($1, $2)", Channel, string(payload)); err != nil && !errors.Is(err, context.Canceled) {
				r.log.Warn("event relay: notify failed", "err", fmt.Errorf("pg_notify: %w", err))
			}
		}
	}
}
