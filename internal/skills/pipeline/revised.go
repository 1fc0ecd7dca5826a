package pipeline

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"quarry/internal/fault"
	"reflect"
	"slices"
	"strings"
)

// fieldRevisedData names the decision's revised data as a whole in field
// errors; problems inside it are named by their path in it
// ("marked_relevent", "queries[1].text"), as the gates' other checks do.
const fieldRevisedData = "revised_data"

// decodeRevised decodes a decision's revised data into v (a pointer to the
// type the checkpoint takes) strictly: every key must be a field of that
// type and every value of the JSON type the field takes. encoding/json
// would drop a misspelt key ("marked_relevent") or a strategy sent to the
// review without a word, and the run would go on with something other
// than what was sent. Problems are EInvalid with message, one field error
// per problem, all of them at once so a client fixes them in one go.
func decodeRevised(raw json.RawMessage, v any, message string) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return &fault.Error{Code: fault.EInvalid, Message: message, Fields: map[string]string{fieldRevisedData: "not JSON: " + err.Error()}}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return &fault.Error{Code: fault.EInvalid, Message: message, Fields: map[string]string{fieldRevisedData: "more than one JSON value"}}
	}
	fe := fault.FieldErrors{}
	checkShape(doc, reflect.TypeOf(v).Elem(), "", fe)
	if err := fe.Err(message); err != nil {
		return err
	}
	if err := json.Unmarshal(raw, v); err != nil { // the shape is checked: not expected
		return &fault.Error{Code: fault.EInvalid, Message: message, Fields: map[string]string{fieldRevisedData: err.Error()}}
	}
	return nil
}

// checkShape records in fe every place where doc (a JSON value decoded
// with UseNumber) does not fit t: an unknown key, or a value of another
// JSON type. A null fits anything, as encoding/json leaves the field
// zero.
func checkShape(doc any, t reflect.Type, path string, fe fault.FieldErrors) {
	if doc == nil {
		return
	}
	field := path
	if field == "" {
		field = fieldRevisedData
	}
	mismatch := func() { fe.Add(field, fmt.Sprintf("must be %s, not %s", wantJSON(t), gotJSON(doc))) }
	if t.Implements(unmarshalerType) || reflect.PointerTo(t).Implements(unmarshalerType) {
		return // the type reads its own JSON; json.Unmarshal reports its errors
	}
	switch t.Kind() {
	case reflect.Pointer:
		checkShape(doc, t.Elem(), path, fe)
	case reflect.Interface:
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		fields := jsonFields(t)
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			i := slices.IndexFunc(fields, func(f jsonField) bool { return f.name == k })
			if i < 0 {
				names := make([]string, len(fields))
				for j, f := range fields {
					names[j] = f.name
				}
				fe.Add(joinPath(path, k), "unknown field; the fields here are "+strings.Join(names, ", "))
				continue
			}
			checkShape(obj[k], fields[i].typ, joinPath(path, k), fe)
		}
	case reflect.Map:
		obj, ok := doc.(map[string]any)
		if !ok {
			mismatch()
			return
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			checkShape(obj[k], t.Elem(), field+"["+k+"]", fe)
		}
	case reflect.Slice, reflect.Array:
		arr, ok := doc.([]any)
		if !ok {
			mismatch()
			return
		}
		for i, el := range arr {
			checkShape(el, t.Elem(), fmt.Sprintf("%s[%d]", field, i), fe)
		}
	case reflect.String:
		if _, ok := doc.(string); !ok {
			mismatch()
		}
	case reflect.Bool:
		if _, ok := doc.(bool); !ok {
			mismatch()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, ok := doc.(json.Number)
		if !ok {
			mismatch()
			return
		}
		if _, err := n.Int64(); err != nil {
			fe.Add(field, fmt.Sprintf("must be a whole number, not %s", n))
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := doc.(json.Number); !ok {
			mismatch()
		}
	}
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// jsonField is a struct field as JSON names it.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the fields encoding/json reads into t, by their JSON
// names, in declaration order (embedded structs' fields in their place).
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for f := range t.Fields() {
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name, f.Type})
	}
	return out
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// wantJSON says in JSON's words what a value of t is written as.
func wantJSON(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Pointer:
		return wantJSON(t.Elem())
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	default:
		return "a whole number"
	}
}

// gotJSON says in JSON's words what doc is.
func gotJSON(doc any) string {
	switch doc.(type) {
	case map[string]any:
		return "an object"
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "true or false"
	default:
		return "a number"
	}
}
