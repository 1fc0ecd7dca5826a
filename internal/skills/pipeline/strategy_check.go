package pipeline

import (
	"fmt"

	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/query"
)

// CheckStrategy reports every problem of a strategy a researcher edited in
// one error, field by field: its shape and sources
// (research.SearchStrategy.ValidateSources), its fields of study and the
// syntax of each query. They were checked one after another, each
// returning first, so an unparseable query was reported only once every
// other field was fixed: a form answered in rounds (issue 16). The strategy
// form and the API both get this one answer (422 with every field).
func CheckStrategy(s research.SearchStrategy, sources []string) error {
	fe := fault.FieldErrors{}
	if err := s.ValidateSources(sources); err != nil {
		fields := fault.ErrorFields(err)
		if len(fields) == 0 {
			return err
		}
		for k, v := range fields {
			fe.Add(k, v)
		}
	}
	if _, err := fieldsOfStudy(s.Filters.FieldsOfStudy); err != nil {
		for k, v := range fault.ErrorFields(err) {
			fe.Add(k, v)
		}
	}
	// A query the shape check refused (empty, too long) already has its
	// error; the parser would only say the same less clearly.
	for i, q := range s.Queries[:min(len(s.Queries), research.MaxQueries)] {
		key := fmt.Sprintf("queries[%d].text", i)
		if _, refused := fe[key]; refused {
			continue
		}
		if _, err := query.Parse(q.Text); err != nil {
			fe.Add(key, fault.ErrorMessage(err))
		}
	}
	return fe.Err("invalid search strategy")
}
