package biblio

import "encoding/json"

// FlexString is a JSON value that may be written as a string or a number:
// identifiers, volumes, issues and pages come both ways from the tools
// that write CSL-JSON and JSON Lines. null is empty.
type FlexString string

// UnmarshalJSON accepts a string, a number or null.
func (f *FlexString) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*f = FlexString(s)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	*f = FlexString(n.String())
	return nil
}
