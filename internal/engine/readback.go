package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// ReadBack is a postcondition checked by the store inside the transaction
// that commits a step's result, after its writes and before the commit:
// Check reads back what the transaction now holds (Written) and returns
// an error when it is not what the step wrote (its update). The store
// then rolls the whole commit back, so nothing of the step persists, and
// the engine records the attempt as failed and follows the step's retry
// policy, as for a Postcondition.
type ReadBack struct {
	Name  string
	Check func(ctx context.Context, w Written, update Update) error
}

// Written reads what a commit's transaction holds before it commits.
type Written interface {
	// State returns the run's state key as the transaction stored it;
	// ok is false when the key is absent.
	State(ctx context.Context, key string) (raw json.RawMessage, ok bool, err error)
}

// ReadBackError is a read-back that failed: the store rolled the commit
// back.
type ReadBackError struct {
	Name string
	Err  error
}

func (e *ReadBackError) Error() string {
	return fmt.Sprintf("postcondition %q failed on reading back what was written (rolled back): %v", e.Name, e.Err)
}

func (e *ReadBackError) Unwrap() error { return e.Err }

// CheckReadBacks runs c's read-backs against w; stores call it last in
// the commit's transaction and roll back on the error it returns.
func CheckReadBacks(ctx context.Context, c Commit, w Written) error {
	for _, rb := range c.ReadBacks {
		if err := rb.Check(ctx, w, c.Update); err != nil {
			return &ReadBackError{Name: rb.Name, Err: err}
		}
	}
	return nil
}

func isReadBack(err error) bool {
	var rb *ReadBackError
	return errors.As(err, &rb)
}
