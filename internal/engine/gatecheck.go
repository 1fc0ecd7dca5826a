package engine

import (
	"encoding/json"
	"time"
)

// GateCheck is one automatic check a gate made at a visit (a definition's
// condition): what was checked, whether it passed, and what it gave. The
// engine commits a visit's checks with the visit's step record, so the
// audit trail holds every result, not only the last one kept in the state.
type GateCheck struct {
	Stage     string `json:"stage"`
	Iteration int    `json:"iteration"`
	// Seq is the step record the check was committed with (its run
	// version); set when read back.
	Seq int64 `json:"seq"`
	// Type is the kind of check ("condition"); Config what it checked
	// (the expression's source).
	Type   string `json:"type"`
	Config string `json:"config"`
	Passed bool   `json:"passed"`
	// Result is the checked value as JSON (null when it could not be
	// evaluated, when Error says why).
	Result    json.RawMessage `json:"result"`
	Error     string          `json:"error,omitempty"`
	CheckedAt time.Time       `json:"checked_at"`
}

// Check records an automatic check a gate's Precheck made; the engine
// commits it with the visit's transition (Commit.Checks). Outside a gate
// visit it is ignored.
func (sc StepContext) Check(c GateCheck) {
	if sc.check == nil {
		return
	}
	if c.Stage == "" {
		c.Stage = sc.StepID
	}
	if c.CheckedAt.IsZero() {
		c.CheckedAt = sc.Now
	}
	c.Iteration = sc.Iteration
	sc.check(c)
}

// takeChecks returns (and forgets) the checks the gate visit in flight
// for run recorded, for the commit that ends the visit.
func (e *Engine) takeChecks(runID string) []GateCheck {
	v, ok := e.checks.LoadAndDelete(runID)
	if !ok {
		return nil
	}
	return v.([]GateCheck)
}
