package handlers

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/library"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/skills/query"
	"quarry/internal/store"
	"quarry/internal/views"
)

// strategyFormOf fills the strategy form from a checkpoint's payload.
func strategyFormOf(runID string, cp engine.Checkpoint, p pipeline.StrategyPayload, known []string) views.StrategyForm {
	f := views.StrategyForm{
		RunID: runID, CheckpointID: cp.ID, Iteration: p.Iteration, Intent: p.Intent,
		YearFrom: itoaOrEmpty(p.Strategy.YearRange.From), YearTo: itoaOrEmpty(p.Strategy.YearRange.To),
		MaxResults:    itoaOrEmpty(p.Strategy.MaxResultsPerSource),
		IncludeTerms:  strings.Join(p.Strategy.Filters.IncludeTerms, ", "),
		ExcludeTerms:  strings.Join(p.Strategy.Filters.ExcludeTerms, ", "),
		FieldsOfStudy: strings.Join(p.Strategy.Filters.FieldsOfStudy, ", "),
		FieldChoices:  query.FieldsOfStudy(),
		SentAs:        map[string]map[string]string{},
		Findings:      p.Findings, QualityGate: p.QualityGate,
	}
	if f.Iteration == 0 {
		f.Iteration = cp.Iteration
	}
	for _, q := range p.Strategy.Queries {
		f.Queries = append(f.Queries, q.Text)
		if len(q.PerSource) > 0 {
			f.SentAs[q.Text] = q.PerSource
		}
	}
	f.Sources = sourceChoices(known, p.Strategy.Sources, p.Strategy.Sources)
	for _, af := range p.Strategy.Files {
		f.Files = append(f.Files, fileChoice(af, true))
	}
	f.Formats = biblio.Formats
	for _, l := range p.Strategy.Filters.Learned {
		f.Learned = append(f.Learned, views.LearnedChoice{LearnedTerm: l, Kept: true})
	}
	return f
}

// fileChoice is an attached file's checkbox; its value carries the file's
// description so the form can be re-rendered without a store lookup. Only
// the ID matters for the search, and the store reads a file only for its
// own run, so a tampered value cannot reach another run's records.
func fileChoice(f research.AttachedFile, checked bool) views.AttachedFileChoice {
	b, _ := json.Marshal(f)
	return views.AttachedFileChoice{File: f, Value: string(b), Checked: checked}
}

// sourceChoices offers every known source plus any the strategy names,
// ticking the chosen ones.
func sourceChoices(known, offered, chosen []string) []views.Choice {
	all := slices.Clone(known)
	for _, s := range offered {
		if !slices.Contains(all, s) {
			all = append(all, s)
		}
	}
	out := make([]views.Choice, 0, len(all))
	for _, s := range all {
		out = append(out, views.Choice{Value: s, Checked: slices.Contains(chosen, s)})
	}
	return out
}

var removeOp = regexp.MustCompile(`^remove:(\d+)$`)

// DecideStrategy handles POST /runs/:id/checkpoints/:cp/strategy. The "op"
// buttons add or remove a query row, or (op=keep, what Enter in a field
// presses) keep the values, and re-render the form (a fragment for htmx,
// the page otherwise); the "action" buttons decide. Approve with a strategy
// that differs from the proposal is an edit, so typed changes are never
// lost. Invalid edits re-render with the values kept and errors by field
// (422); a checkpoint decided meanwhile shows the run's new state with who
// decided (409).
func (h *Runs) DecideStrategy(c echo.Context) error {
	ctx := c.Request().Context()
	run, cp, err := h.pendingCheckpoint(c, pipeline.KindStrategyConfirmation)
	if fault.ErrorCode(err) == fault.EConflict {
		// Decided meanwhile: the form as this submit carried it is shown
		// with the conflict, so the edits can be copied.
		p, _ := engine.PayloadAs[pipeline.StrategyPayload](cp)
		form, _ := c.FormParams()
		f := strategyFormFromPost(run.ID, cp, p, knownSources(h.engine), form)
		return h.conflictPageWithStrategy(c, run.ID, err, submittedStrategy(f))
	}
	if err != nil {
		return err
	}
	p, err := engine.PayloadAs[pipeline.StrategyPayload](cp)
	if err != nil {
		return err
	}
	form, err := c.FormParams()
	if err != nil {
		return fault.Errorf(fault.EInvalid, "unreadable form: %v", err)
	}
	f := strategyFormFromPost(run.ID, cp, p, knownSources(h.engine), form)
	op := form.Get("op")
	attached, err := h.attachUpload(c, run.ID, &f)
	if err != nil {
		return err
	}
	switch {
	case op == "attach" || (attached == nil && f.FileError != ""):
		status := http.StatusOK
		if f.FileError != "" {
			status = http.StatusUnprocessableEntity
		}
		return h.renderStrategy(c, run, status, f)
	case op == "keep":
		// Enter in a field: the form's first submit button keeps the
		// edits on the page and decides nothing.
		f.EnterNotice = "Nothing was decided: Enter keeps your edits on the page. Use Approve, Save edits & continue or Reject to decide."
		return h.renderStrategy(c, run, http.StatusOK, f)
	case op == "add":
		f.Queries = append(f.Queries, "")
		return h.renderStrategy(c, run, http.StatusOK, f)
	case removeOp.MatchString(op):
		i, _ := strconv.Atoi(removeOp.FindStringSubmatch(op)[1])
		if i < len(f.Queries) {
			f.Queries = slices.Delete(f.Queries, i, i+1)
		}
		return h.renderStrategy(c, run, http.StatusOK, f)
	}
	d := engine.Decision{Action: engine.DecisionAction(form.Get("action")), Note: strings.TrimSpace(form.Get("note")), DecidedBy: h.people.name(c)}
	if d.Action == engine.Approve && (attached != nil || carriesStrategy(form)) {
		// Approve means "search this": when the form says something other
		// than the proposal (a query, a year, a source, a file attached or
		// detached), that is an edit, checked like one, so what the
		// researcher typed is never dropped in favour of the proposal.
		if s, fe := strategyOf(f, p.Strategy); len(fe) > 0 || !sameStrategy(s, p.Strategy) {
			d.Action = engine.Edit
		}
	}
	if d.Action == engine.Edit {
		// Every field's problem in one answer: the numbers the form could
		// not read, and everything the gate checks (shape, sources, fields
		// of study, each query's syntax), so no error waits for the others
		// to be fixed.
		strategy, fe := strategyOf(f, p.Strategy)
		if err := pipeline.CheckStrategy(strategy, knownOr(knownSources(h.engine), p.Strategy.Sources)); err != nil {
			fields := fault.ErrorFields(err)
			if len(fields) == 0 {
				return err
			}
			for k, v := range fields {
				fe.Add(k, v)
			}
		}
		if len(fe) > 0 {
			f.Errors = formErrors(fe, form["sources"])
			return h.renderStrategy(c, run, http.StatusUnprocessableEntity, f)
		}
		// Only a tampered form carries a file that is not the run's; it
		// gets the error page, not the form.
		if err := checkFiles(ctx, h.files, run.ID, strategy.Files); err != nil {
			return err
		}
		if d.RevisedData, err = json.Marshal(strategy); err != nil {
			return err
		}
	}
	err = h.engine.Decide(ctx, run.ID, cp.ID, d)
	switch fault.ErrorCode(err) {
	case "":
		settle(ctx, h.engine, h.runs, run.ID, h.done)
		return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID)
	case fault.EConflict:
		return h.conflictPageWithStrategy(c, run.ID, err, submittedStrategy(f))
	case fault.EInvalid:
		if fields := fault.ErrorFields(err); len(fields) > 0 {
			f.Errors = formErrors(fields, form["sources"])
			if d.Action == engine.Edit { // the review of what was typed, which the refusal named
				s, _ := strategyOf(f, p.Strategy)
				if f.Findings, err = pipeline.FindingsOf(run, s, cp.Iteration, knownOr(knownSources(h.engine), p.Strategy.Sources)); err != nil {
					return err
				}
			}
			return h.renderStrategy(c, run, http.StatusUnprocessableEntity, f)
		}
	}
	return err
}

// submittedStrategy is the strategy form as a losing submit carried it —
// queries, ticked sources, years, filters, ticked files, note — for the
// conflict page; nil when it carried none of that (a bare approve from a
// script). Blank queries are left out: there is nothing in them to copy.
func submittedStrategy(f views.StrategyForm) *views.SubmittedStrategy {
	s := views.SubmittedStrategy{
		YearFrom: strings.TrimSpace(f.YearFrom), YearTo: strings.TrimSpace(f.YearTo), MaxResults: strings.TrimSpace(f.MaxResults),
		IncludeTerms: strings.TrimSpace(f.IncludeTerms), ExcludeTerms: strings.TrimSpace(f.ExcludeTerms),
		FieldsOfStudy: strings.TrimSpace(f.FieldsOfStudy), Note: strings.TrimSpace(f.Note),
	}
	for _, q := range f.Queries {
		if q = strings.TrimSpace(q); q != "" {
			s.Queries = append(s.Queries, q)
		}
	}
	for _, ch := range f.Sources {
		if ch.Checked {
			s.Sources = append(s.Sources, ch.Value)
		}
	}
	for _, fc := range f.Files {
		if fc.Checked {
			s.Files = append(s.Files, fc.File.Name)
		}
	}
	if len(s.Queries) == 0 && len(s.Sources) == 0 && len(s.Files) == 0 &&
		s.YearFrom == "" && s.YearTo == "" && s.MaxResults == "" && s.IncludeTerms == "" && s.ExcludeTerms == "" && s.FieldsOfStudy == "" && s.Note == "" {
		return nil
	}
	return &s
}

func knownOr(known, fallback []string) []string {
	if len(known) > 0 {
		return known
	}
	return fallback
}

// formErrors maps engine field paths to the form's error keys. Source
// errors name the posted list's index; they are shown once, by the group.
// A filter term's error ("filters.include_terms[2]") is shown by its
// list's input, the one place the form has for it, naming the term by
// its place in the comma-separated list; a learned exclusion is one of
// the exclusions the form lists.
func formErrors(fields map[string]string, posted []string) map[string]string {
	out := map[string]string{}
	for _, k := range slices.Sorted(maps.Keys(fields)) { // one order for joined messages
		v := fields[k]
		if list, index, ok := strings.Cut(k, "["); ok && strings.HasPrefix(k, "filters.") {
			i, _ := strconv.Atoi(strings.TrimSuffix(index, "]"))
			list = strings.Replace(list, "learned_exclude_terms", "exclude_terms", 1)
			v = fmt.Sprintf("term %d: %s", i+1, v)
			if prev, ok := out[list]; ok {
				v = prev + "; " + v
			}
			out[list] = v
			continue
		}
		if strings.HasPrefix(k, "sources[") {
			i, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(k, "sources["), "]"))
			if i < len(posted) {
				v = fmt.Sprintf("%s (%q)", v, posted[i])
			}
			if prev, ok := out["sources"]; ok {
				v = prev + "; " + v
			}
			out["sources"] = v
			continue
		}
		out[k] = v
	}
	return out
}

func (h *Runs) renderStrategy(c echo.Context, run engine.Run, status int, f views.StrategyForm) error {
	page := h.people.page(c)
	if isHTMX(c) {
		return render(c, status, views.StrategyFormFields(page, f))
	}
	d, err := runData(c.Request().Context(), h.runs, h.engine, run, page, h.settings.stopWindow)
	if err != nil {
		return err
	}
	d.Strategy = &f
	return render(c, status, views.RunPage(d))
}

// strategyFormFromPost is the form as the person submitted it.
func strategyFormFromPost(runID string, cp engine.Checkpoint, p pipeline.StrategyPayload, known []string, form url.Values) views.StrategyForm {
	f := strategyFormOf(runID, cp, p, known)
	f.Queries = slices.Clone(form["query"])
	f.Sources = sourceChoices(known, p.Strategy.Sources, form["sources"])
	for _, s := range form["sources"] {
		if !slices.ContainsFunc(f.Sources, func(ch views.Choice) bool { return ch.Value == s }) {
			f.Sources = append(f.Sources, views.Choice{Value: s, Checked: true})
		}
	}
	f.YearFrom, f.YearTo = form.Get("year_from"), form.Get("year_to")
	f.MaxResults = form.Get("max_results_per_source")
	f.IncludeTerms, f.ExcludeTerms = form.Get("include_terms"), form.Get("exclude_terms")
	f.FieldsOfStudy = form.Get("fields_of_study")
	f.Note = form.Get("note")
	if form.Get("learned_shown") != "" { // unticked learned terms are removed
		for i, l := range f.Learned {
			f.Learned[i].Kept = slices.Contains(form["learned"], l.Use+":"+l.Term)
		}
	}
	// Attached files: the ticked ones come back as checkbox values; the
	// unticked ones are offered again from the payload, unticked.
	f.Files = nil
	posted := map[string]bool{}
	for _, v := range form["file"] {
		var af research.AttachedFile
		if json.Unmarshal([]byte(v), &af) == nil && af.ID != "" && !posted[af.ID] {
			posted[af.ID] = true
			f.Files = append(f.Files, fileChoice(af, true))
		}
	}
	for _, af := range p.Strategy.Files {
		if !posted[af.ID] {
			f.Files = append(f.Files, fileChoice(af, false))
		}
	}
	return f
}

// maxAttachedRecords bounds one attached file: its records are loaded by
// every search step of the run. Bigger exports belong in the library.
const maxAttachedRecords = 20000

// attachUpload stores a file posted with the strategy form, if any, as a
// file of the run and adds it (ticked) to the form. A file Quarry cannot
// read leaves the form's FileError set and returns nil.
func (h *Runs) attachUpload(c echo.Context, runID string, f *views.StrategyForm) (*research.AttachedFile, error) {
	fh, err := c.FormFile("attach")
	if err != nil || fh.Size == 0 && fh.Filename == "" {
		if c.FormValue("op") == "attach" {
			f.FileError = "Choose a file to attach."
		}
		return nil, nil
	}
	src, err := fh.Open()
	if err != nil {
		f.FileError = "The upload could not be read: " + err.Error()
		return nil, nil
	}
	defer src.Close()
	contents, err := library.ReadAll(src, fh.Filename, codecs.Options{Format: c.FormValue("attach_format"), Limits: h.read.Limits, Gzip: h.read.Gzip}, maxAttachedRecords)
	if err != nil {
		if fault.ErrorCode(err) == fault.EInvalid {
			f.FileError = fault.ErrorMessage(err)
			return nil, nil
		}
		return nil, err
	}
	if len(contents.Papers) == 0 {
		f.FileError = fmt.Sprintf("%s has no readable records (%d skipped).", fh.Filename, len(contents.Skipped))
		return nil, nil
	}
	for i := range contents.Papers {
		contents.Papers[i].Source = fh.Filename
	}
	stored, err := h.files.AttachRunFile(c.Request().Context(), store.RunFile{RunID: runID, Name: fh.Filename, Format: contents.Format,
		Papers: contents.Papers, Skipped: contents.Skipped, UploadedBy: h.people.name(c)})
	if err != nil {
		return nil, err
	}
	af := research.AttachedFile{ID: stored.ID, Name: stored.Name, Format: stored.Format, Records: len(contents.Papers)}
	f.Files = append(f.Files, fileChoice(af, true))
	f.FileMessage = fmt.Sprintf("Attached %s: %d records", fh.Filename, len(contents.Papers))
	if n := len(contents.Skipped); n > 0 {
		first := contents.Skipped[0]
		f.FileMessage += fmt.Sprintf("; %d skipped (first at line %d: %s)", n, first.Line, first.Reason)
	}
	f.FileMessage += "."
	return &af, nil
}

// chosenFiles are the attached files the form keeps ticked.
func chosenFiles(f views.StrategyForm) []research.AttachedFile {
	var out []research.AttachedFile
	for _, fc := range f.Files {
		if fc.Checked {
			out = append(out, fc.File)
		}
	}
	return out
}

// strategyFields are the strategy form's inputs. A browser always posts
// the text ones, even empty, so a post naming none of them carries no
// strategy (a bare approve from a script) and approves the proposal.
var strategyFields = []string{"query", "sources", "year_from", "year_to", "max_results_per_source", "include_terms", "exclude_terms", "fields_of_study", "file"}

func carriesStrategy(form url.Values) bool {
	return slices.ContainsFunc(strategyFields, func(k string) bool { _, ok := form[k]; return ok })
}

// sameStrategy reports whether the form's strategy a says what the
// proposal b says, in everything the form can change. Sources and files
// are compared as sets, because the form lists them in its own order.
func sameStrategy(a, b research.SearchStrategy) bool {
	text := func(q research.Query) string { return strings.TrimSpace(q.Text) }
	sameSet := func(x, y []string) bool {
		return slices.Equal(slices.Sorted(slices.Values(x)), slices.Sorted(slices.Values(y)))
	}
	fileIDs := func(fs []research.AttachedFile) []string {
		ids := make([]string, 0, len(fs))
		for _, f := range fs {
			ids = append(ids, f.ID)
		}
		return ids
	}
	return slices.EqualFunc(a.Queries, b.Queries, func(x, y research.Query) bool { return text(x) == text(y) }) &&
		sameSet(a.Sources, b.Sources) && a.YearRange == b.YearRange && a.MaxResultsPerSource == b.MaxResultsPerSource &&
		slices.Equal(a.Filters.IncludeTerms, b.Filters.IncludeTerms) && slices.Equal(a.Filters.ExcludeTerms, b.Filters.ExcludeTerms) &&
		slices.Equal(a.Filters.FieldsOfStudy, b.Filters.FieldsOfStudy) && len(a.Filters.Learned) == len(b.Filters.Learned) &&
		sameSet(fileIDs(a.Files), fileIDs(b.Files))
}

// strategyOf turns the form into a SearchStrategy. A query whose text is
// unchanged keeps the per-source forms the builder wrote for it.
func strategyOf(f views.StrategyForm, orig research.SearchStrategy) (research.SearchStrategy, fault.FieldErrors) {
	fe := fault.FieldErrors{}
	s := research.SearchStrategy{Filters: orig.Filters, Sources: []string{}, QuestionWords: orig.QuestionWords}
	for _, text := range f.Queries {
		q := research.Query{Text: strings.TrimSpace(text)}
		for _, o := range orig.Queries {
			if o.Text == q.Text {
				q.PerSource = o.PerSource
			}
		}
		s.Queries = append(s.Queries, q)
	}
	for _, ch := range f.Sources {
		if ch.Checked {
			s.Sources = append(s.Sources, ch.Value)
		}
	}
	num := func(key, v string) int {
		v = strings.TrimSpace(v)
		if v == "" {
			return 0
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			fe.Add(key, "must be a whole number")
		}
		return n
	}
	s.YearRange.From = num("year_range.from", f.YearFrom)
	s.YearRange.To = num("year_range.to", f.YearTo)
	s.MaxResultsPerSource = num("max_results_per_source", f.MaxResults)
	s.Filters.IncludeTerms = splitTerms(f.IncludeTerms)
	s.Filters.ExcludeTerms = splitTerms(f.ExcludeTerms)
	if len(f.Learned) > 0 { // the learned terms still ticked; an unticked exclusion leaves exclude_terms too
		s.Filters.Learned = []research.LearnedTerm{}
		for _, l := range f.Learned {
			if l.Kept {
				s.Filters.Learned = append(s.Filters.Learned, l.LearnedTerm)
			} else if l.Use == research.LearnedExclude {
				s.Filters.ExcludeTerms = slices.DeleteFunc(s.Filters.ExcludeTerms, func(e string) bool { return strings.EqualFold(e, l.Term) })
			}
		}
	}
	s.Filters.FieldsOfStudy = splitTerms(f.FieldsOfStudy)
	s.Files = chosenFiles(f)
	return s, fe
}

func splitTerms(s string) []string {
	var out []string
	for t := range strings.SplitSeq(s, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// itoaOrEmpty shows a number the strategy leaves unset (0) as an empty
// input rather than "0".
func itoaOrEmpty(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
