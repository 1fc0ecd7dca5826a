package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"
)

// client speaks the JSON API the way a script does (README "JSON API"):
// JSON bodies with Content-Type application/json, which is what exempts
// /api/ requests from the CSRF token.
type client struct {
	base string
	hc   *http.Client
}

func newClient(base string) *client {
	// No keep-alive: a connection to a killed server would fail the next
	// request sent on it before it reached the new one.
	tr := &http.Transport{DisableKeepAlives: true}
	return &client{base: base, hc: &http.Client{Timeout: 10 * time.Second, Transport: tr}}
}

// do sends one request; err is a transport error (the server is down or
// went down), otherwise status is the answer's and out holds its body.
func (c *client) do(ctx context.Context, method, path string, in, out any) (status int, body []byte, err error) {
	var rd io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return 0, nil, err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	body, err = io.ReadAll(resp.Body)
	if err != nil {
		return resp.StatusCode, nil, err
	}
	if out != nil && resp.StatusCode < 300 {
		if err := json.Unmarshal(body, out); err != nil {
			return resp.StatusCode, body, fmt.Errorf("%s %s: %d with a body that is not the JSON expected: %v", method, path, resp.StatusCode, err)
		}
	}
	return resp.StatusCode, body, nil
}

// startInput is POST /api/runs.
type startInput struct {
	Question           string `json:"question"`
	MaxIterations      int    `json:"max_iterations"`
	StrategyCheckpoint bool   `json:"strategy_checkpoint"`
	StartedBy          string `json:"started_by"`
}

// runJSON is the part of GET /api/runs/:id the driver reads.
type runJSON struct {
	ID         string          `json:"id"`
	Status     string          `json:"status"`
	Iteration  int             `json:"iteration"`
	Error      string          `json:"error"`
	Checkpoint *checkpointJSON `json:"checkpoint"`
}

// checkpointJSON is a run's pending checkpoint.
type checkpointJSON struct {
	ID        string          `json:"id"`
	Kind      string          `json:"kind"`
	Iteration int             `json:"iteration"`
	Payload   json.RawMessage `json:"payload"`
}

// decisionInput is POST /api/runs/:id/decisions.
type decisionInput struct {
	CheckpointID string          `json:"checkpoint_id"`
	Action       string          `json:"action"`
	RevisedData  json.RawMessage `json:"revised_data,omitempty"`
	Note         string          `json:"note,omitempty"`
	DecidedBy    string          `json:"decided_by"`
}

// createRun starts a run; status 0 with err means the answer never came
// (the run may or may not exist).
func (c *client) createRun(ctx context.Context, in startInput) (id string, status int, err error) {
	var out struct {
		ID string `json:"id"`
	}
	status, body, err := c.do(ctx, http.MethodPost, "/api/runs", in, &out)
	if err == nil && status != http.StatusCreated {
		err = fmt.Errorf("POST /api/runs: %d %s", status, bytes.TrimSpace(body))
	}
	return out.ID, status, err
}

// getRun reads a run; status 0 with err means the server did not answer.
func (c *client) getRun(ctx context.Context, id string) (runJSON, int, error) {
	var out runJSON
	status, body, err := c.do(ctx, http.MethodGet, "/api/runs/"+id, nil, &out)
	if err == nil && status != http.StatusOK {
		err = fmt.Errorf("GET /api/runs/%s: %d %s", id, status, bytes.TrimSpace(body))
	}
	return out, status, err
}

// decide posts a decision; status 0 with err means the answer never came.
func (c *client) decide(ctx context.Context, runID string, d decisionInput) (int, []byte, error) {
	return c.do(ctx, http.MethodPost, "/api/runs/"+runID+"/decisions", d, nil)
}
