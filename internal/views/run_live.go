package views

import (
	"fmt"
	"net/url"
)

// isFinal reports whether a run in status can no longer change, so its
// status line stops polling.
func isFinal(status string) bool {
	return status == "completed" || status == "failed" || status == "canceled"
}

// statusURL is the poll's address: it carries the checkpoint and status the
// page was drawn with, and typed=1 when the page shows a losing submit's
// values, so the server can tell whether the page is out of date and
// whether it may reload it.
func statusURL(s RunStatus) string {
	u := fmt.Sprintf("/runs/%s/status?cp=%s&s=%s", s.ID, s.CheckpointID, s.Status)
	if s.HoldsInput {
		u += "&typed=1"
	}
	return u
}

// eventsURL is the event stream's address: it carries the checkpoint and
// status the page was drawn with, as statusURL does, so the stream's first
// message can ask the page to fetch its new state when the run has moved
// on since the page was drawn.
func eventsURL(s RunStatus) string {
	return "/runs/" + s.ID + "/events?" + url.Values{"cp": {s.CheckpointID}, "s": {s.Status}}.Encode()
}
