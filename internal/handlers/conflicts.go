package handlers

import (
	"bytes"
	"encoding/csv"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"quarry/internal/access"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
	"quarry/internal/views"
)

// dualRun reads the run of the request and its marks, refusing a run that
// is not dual-screened (ENotFound: the page does not exist for it).
func (h *Runs) dualRun(c echo.Context) (engine.Run, research.ScreeningPlan, []research.Mark, error) {
	ctx := c.Request().Context()
	run, err := h.runs.Run(ctx, c.Param("id"))
	if err != nil {
		return run, research.ScreeningPlan{}, nil, err
	}
	plan := pipeline.ScreeningPlanOf(run)
	if run.Workflow != pipeline.Name || !plan.Dual() {
		return run, plan, nil, fault.Errorf(fault.ENotFound, "run %s is screened by one person: it has no conflicts", run.ID)
	}
	events, err := h.runs.MarkEvents(ctx, run.ID)
	return run, plan, events, err
}

// Conflicts handles GET /runs/:id/conflicts: the papers a dual-screened
// run's reviewers screened differently, each reviewer's mark (the papers
// are complete, so nothing here breaks the blinding), a resolve form for
// who may decide them, and the reviewers' agreement.
func (h *Runs) Conflicts(c echo.Context) error {
	run, plan, events, err := h.dualRun(c)
	if err != nil {
		return err
	}
	person := h.people.name(c)
	d := views.ConflictsData{Page: h.people.page(c), RunID: run.ID, Reviewers: plan.Reviewers, Resolver: plan.Resolver}
	titles := map[string]string{}
	if cp, p, err := pendingReview(c.Request().Context(), h.runs, run); err == nil {
		d.CheckpointID = cp.ID
		for _, paper := range p.Collection.Papers {
			titles[paper.ID] = paper.Title
		}
	}
	mayDecide := identityOf(c).open || h.mayDecide(c, run)
	for _, v := range research.Screen(plan, events) {
		switch v.Status {
		case research.VerdictPending:
			d.Pending++
		case research.VerdictAgreed:
			d.Agreed++
		case research.VerdictResolved:
			d.Resolved++
		case research.VerdictConflict:
			row := views.ConflictRow{PaperID: v.PaperID, Title: titles[v.PaperID], MayResolve: mayDecide && research.MayResolve(plan, v, person)}
			if row.Title == "" {
				row.Title = v.PaperID
			}
			for _, m := range v.Marks {
				row.Marks = append(row.Marks, views.ConflictMark{By: m.By, Mark: m.Mark, Note: m.Note, Reason: m.Reason})
			}
			sort.Slice(row.Marks, func(i, j int) bool { return strings.ToLower(row.Marks[i].By) < strings.ToLower(row.Marks[j].By) })
			d.Conflicts = append(d.Conflicts, row)
		}
	}
	for _, a := range research.Agreements(events) {
		d.Agreements = append(d.Agreements, agreementRow(a))
	}
	return render(c, http.StatusOK, views.ConflictsPage(d))
}

// mayDecide says whether the person's role lets them decide in the run's
// project (the resolve form is shown only to them).
func (h *Runs) mayDecide(c echo.Context, run engine.Run) bool {
	if h.auth == nil {
		return true
	}
	return h.auth.allowed(c.Request().Context(), identityOf(c), run.Project, run.ID, access.Decide) == nil
}

func agreementRow(a research.PairAgreement) views.AgreementRow {
	r := views.AgreementRow{A: a.A, B: a.B, Papers: a.Items, Agreed: a.Agreed, Percent: strconv.FormatFloat(a.Percent, 'f', 1, 64) + "%", Kappa: "undefined"}
	if a.KappaDefined {
		r.Kappa = strconv.FormatFloat(a.Kappa, 'f', 2, 64)
	}
	return r
}

// Resolve handles POST /runs/:id/checkpoints/:cp/resolve: the person
// decides a paper the reviewers screened differently (paper_id, mark
// relevant or irrelevant, an optional note). Only a paper in conflict can
// be resolved (409 otherwise), and only by whom the run's plan allows
// (403: a reviewer of the paper when a third person must decide).
func (h *Runs) Resolve(c echo.Context) error {
	run, plan, events, err := h.dualRun(c)
	if err != nil {
		return err
	}
	cp, p, err := pendingReview(c.Request().Context(), h.runs, run)
	if err != nil {
		return err
	}
	if cp.ID != c.Param("cp") {
		return fault.Errorf(fault.EConflict, "the review %s is no longer the one waiting", c.Param("cp"))
	}
	paperID := strings.TrimSpace(c.FormValue("paper_id"))
	person := h.people.name(c)
	m := research.Mark{PaperID: paperID, Mark: c.FormValue("mark"), Note: c.FormValue("note"), By: person, Resolves: true}.Normalize()
	if err := m.Validate(); err != nil {
		return err
	}
	if _, ok := p.Collection.Paper(paperID); !ok {
		return fault.Errorf(fault.ENotFound, "paper %s is not in the review of run %s", paperID, run.ID)
	}
	i := -1
	verdicts := research.Screen(plan, events)
	for j, v := range verdicts {
		if v.PaperID == paperID {
			i = j
		}
	}
	if i < 0 || verdicts[i].Status != research.VerdictConflict {
		return fault.Errorf(fault.EConflict, "paper %s is not in conflict: only a disagreement is resolved", paperID)
	}
	if !research.MayResolve(plan, verdicts[i], person) {
		return fault.Errorf(fault.EUnauthorized, "you screened this paper: a third person resolves its disagreement")
	}
	if _, err := h.runs.SaveMarks(c.Request().Context(), run.ID, cp.ID, []research.Mark{m}); err != nil {
		return err
	}
	return c.Redirect(http.StatusSeeOther, "/runs/"+run.ID+"/conflicts")
}

// AgreementCSV handles GET /runs/:id/agreement.csv: each reviewer pair's
// papers in common, agreements, percent agreement and Cohen's kappa.
func (h *Runs) AgreementCSV(c echo.Context) error {
	_, _, events, err := h.dualRun(c)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	_ = w.Write([]string{"reviewer_a", "reviewer_b", "papers", "agreed", "percent_agreement", "kappa"})
	for _, a := range research.Agreements(events) {
		kappa := ""
		if a.KappaDefined {
			kappa = strconv.FormatFloat(a.Kappa, 'f', 4, 64)
		}
		_ = w.Write([]string{csvSafe(a.A), csvSafe(a.B), strconv.Itoa(a.Items), strconv.Itoa(a.Agreed), strconv.FormatFloat(a.Percent, 'f', 2, 64), kappa})
	}
	w.Flush()
	c.Response().Header().Set(echo.HeaderContentDisposition, `attachment; filename="agreement.csv"`)
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8", buf.Bytes())
}

// csvSafe keeps a spreadsheet from reading a name as a formula.
func csvSafe(s string) string {
	if s != "" && strings.ContainsRune("=+-@", rune(s[0])) {
		return "'" + s
	}
	return s
}
