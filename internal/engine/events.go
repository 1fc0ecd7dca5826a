package engine

import (
	"sync"
	"time"
)

// EventType says what an Event reports.
type EventType string

// The progress events pages can stream.
const (
	EventStatus       EventType = "status"
	EventStepStarted  EventType = "step_started"
	EventStepFinished EventType = "step_finished"
	EventCheckpoint   EventType = "checkpoint"
	EventDecision     EventType = "decision"
	EventProgress     EventType = "progress"
)

// Event is one progress report about a run, published in-process.
type Event struct {
	Type      EventType      `json:"type"`
	RunID     string         `json:"run_id"`
	Step      string         `json:"step,omitempty"`
	Status    Status         `json:"status,omitempty"`
	Outcome   Outcome        `json:"outcome,omitempty"`
	Kind      CheckpointKind `json:"kind,omitempty"`
	Iteration int            `json:"iteration,omitempty"`
	Attempt   int            `json:"attempt,omitempty"`
	Message   string         `json:"message,omitempty"`
	Data      any            `json:"data,omitempty"`
	At        time.Time      `json:"at"`
}

// Broker fans events out to subscribers. Publishing never blocks the
// engine: a subscriber that falls behind loses events (pages re-read the
// run's state from the store, so a lost event costs only liveliness).
type Broker struct {
	mu   sync.Mutex
	subs map[*subscription]struct{}
	// relay, when set, also hands every event published here to the
	// other processes sharing the database (RelayTo).
	relay func(Event)
}

type subscription struct {
	runID string
	ch    chan Event
}

// NewBroker returns an empty broker.
func NewBroker() *Broker { return &Broker{subs: map[*subscription]struct{}{}} }

// Subscribe returns events for one run ("" for every run) and a function
// that ends the subscription.
func (b *Broker) Subscribe(runID string) (<-chan Event, func()) {
	s := &subscription{runID: runID, ch: make(chan Event, 64)}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	var once sync.Once
	return s.ch, func() {
		once.Do(func() {
			b.mu.Lock()
			delete(b.subs, s)
			b.mu.Unlock()
			close(s.ch)
		})
	}
}

// RelayTo makes Publish also hand each event to relay, which passes it
// to the other replicas of a shared database (their Deliver): a page
// watching a run on one replica sees the steps another replica runs. Set
// it before the engine starts; relay must not block.
func (b *Broker) RelayTo(relay func(Event)) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.relay = relay
}

// Publish delivers ev to every matching subscriber that has room, and to
// the relay if there is one.
func (b *Broker) Publish(ev Event) {
	b.Deliver(ev)
	b.mu.Lock()
	relay := b.relay
	b.mu.Unlock()
	if relay != nil {
		relay(ev)
	}
}

// Deliver delivers ev to this process's subscribers only: an event
// another replica published, which must not be relayed back.
func (b *Broker) Deliver(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.runID != "" && s.runID != ev.RunID {
			continue
		}
		select {
		case s.ch <- ev:
		default:
		}
	}
}
