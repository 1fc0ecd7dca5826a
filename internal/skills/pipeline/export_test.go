package pipeline_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/engine"
	"quarry/internal/fault"
	"quarry/internal/library/demo"
	"quarry/internal/research"
	"quarry/internal/skills/pipeline"
)

func paper(id, title string) research.ScoredPaper {
	return research.ScoredPaper{RawPaper: research.RawPaper{ID: id, Title: title, Venue: "Journal of Tests"}, Score: 0.5}
}

func TestExportRecords(t *testing.T) {
	t.Parallel()
	a, b, c, d := paper("a", "A"), paper("b", "B"), paper("c", "C"), paper("d", "D")
	a.ArxivID, a.Venue = "2101.00001", "arXiv"
	notes := map[string]string{"a": "fits; check n", "b": "wrong population", "x": "not exported"}
	done := pipeline.RunState{
		Collection:       &research.PaperCollection{Papers: []research.ScoredPaper{a, b, c}},
		Final:            &research.PaperCollection{Papers: []research.ScoredPaper{a, b, c, d}},
		Workflow:         research.WorkflowState{AccumulatedPapers: []research.ScoredPaper{a, d}, PaperNotes: notes},
		MarkedIrrelevant: []research.ScoredPaper{b},
	}
	running := done
	running.Final = nil
	fresh := pipeline.RunState{}

	type row struct{ id, mark, note, typ string }
	tests := []struct {
		name     string
		rs       pipeline.RunState
		set      string
		want     []row
		wantCode string
	}{
		{"FinalLeavesOutIrrelevant", done, pipeline.ExportFinal, []row{
			{"a", biblio.Relevant, "fits; check n", biblio.Preprint}, {"c", "", "", biblio.Article}, {"d", biblio.Relevant, "", biblio.Article}}, ""},
		{"FinalWhileRunning", running, pipeline.ExportFinal, nil, fault.EInvalid},
		{"Accumulated", running, pipeline.ExportAccumulated, []row{
			{"a", biblio.Relevant, "fits; check n", biblio.Preprint}, {"d", biblio.Relevant, "", biblio.Article}}, ""},
		{"AccumulatedNone", fresh, pipeline.ExportAccumulated, []row{}, ""},
		{"Review", running, pipeline.ExportReview, []row{
			{"a", biblio.Relevant, "fits; check n", biblio.Preprint}, {"b", biblio.Irrelevant, "wrong population", biblio.Article}, {"c", "", "", biblio.Article}}, ""},
		{"ReviewBeforeSearch", fresh, pipeline.ExportReview, nil, fault.EInvalid},
		{"UnknownSet", done, "everything", nil, fault.EInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			recs, err := pipeline.ExportRecords(tt.rs, nil, tt.set)
			require.Equal(t, tt.wantCode, fault.ErrorCode(err), "%v", err)
			if tt.wantCode != "" {
				require.NotEmpty(t, fault.ErrorMessage(err))
				require.Contains(t, fault.ErrorFields(err), "set")
				return
			}
			got := make([]row, 0, len(recs))
			for _, r := range recs {
				got = append(got, row{r.Paper.ID, r.Mark, r.Note, r.Type})
			}
			require.Equal(t, tt.want, got)
		})
	}
}

func TestPaperType(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		p    research.RawPaper
		want string
	}{
		// Preprints: on a preprint server and nowhere else.
		{"ArxivOnly", research.RawPaper{ArxivID: "2101.00001"}, biblio.Preprint},
		{"ArxivVenue", research.RawPaper{Venue: "arXiv (Cornell University)"}, biblio.Preprint},
		{"ArxivDOI", research.RawPaper{DOI: "10.48550/arXiv.2101.00001", Venue: "arXiv"}, biblio.Preprint},
		{"ArxivPreprintVenue", research.RawPaper{Venue: "arXiv preprint", ArxivID: "1907.11692"}, biblio.Preprint},
		{"BioRxiv", research.RawPaper{DOI: "10.1101/2020.01.01.1", Venue: "bioRxiv"}, biblio.Preprint},
		{"BioRxivDOIOnly", research.RawPaper{DOI: "10.1101/2020.03.22.002386"}, biblio.Preprint},
		{"BioRxivOldDOI", research.RawPaper{DOI: "10.1101/645572"}, biblio.Preprint},
		{"SSRN", research.RawPaper{DOI: "10.2139/ssrn.3503207", Venue: "SSRN Electronic Journal"}, biblio.Preprint},
		// Journals: by name, by a DOI of a journal publisher, by PubMed.
		{"PublishedPreprint", research.RawPaper{ArxivID: "2101.00001", DOI: "10.1000/x", Venue: "Journal of X"}, biblio.Article},
		{"Journal", research.RawPaper{Venue: "Journal of Sleep Research"}, biblio.Article},
		{"VolumeOnly", research.RawPaper{Venue: "Nature", Volume: "12"}, biblio.Article},
		{"PubMed", research.RawPaper{PMID: "123"}, biblio.Article},
		{"AlphaFold", research.RawPaper{Venue: "Nature", DOI: "10.1038/s41586-021-03819-2"}, biblio.Article},
		{"Science", research.RawPaper{Venue: "Science", DOI: "10.1126/science.aac4716"}, biblio.Article},
		{"Cell", research.RawPaper{Venue: "Cell", DOI: "10.1016/j.cell.2014.05.010"}, biblio.Article},
		{"Lancet", research.RawPaper{Venue: "The Lancet", DOI: "10.1016/S0140-6736(20)30752-2"}, biblio.Article},
		{"BMJ", research.RawPaper{Venue: "BMJ", DOI: "10.1136/bmj.c332"}, biblio.Article},
		{"JAMA", research.RawPaper{Venue: "JAMA", DOI: "10.1001/jama.2016.17216"}, biblio.Article},
		{"Neuron", research.RawPaper{Venue: "Neuron", DOI: "10.1016/j.neuron.2004.08.031"}, biblio.Article},
		{"Sleep", research.RawPaper{Venue: "Sleep", DOI: "10.1093/sleep/26.2.117"}, biblio.Article},
		{"JournalDOIOnly", research.RawPaper{DOI: "10.1038/nature14539"}, biblio.Article},
		{"JournalBrandNoDOI", research.RawPaper{Venue: "The Lancet Digital Health"}, biblio.Article},
		{"PLOSNoDOI", research.RawPaper{Venue: "PLOS Medicine"}, biblio.Article},
		{"NatureJournalNoDOI", research.RawPaper{Venue: "Nature Medicine"}, biblio.Article},
		{"CACM", research.RawPaper{Venue: "Communications of the ACM", DOI: "10.1145/362384.362685"}, biblio.Article},
		{"ArxivRecordOfAJournalPaper", research.RawPaper{Venue: "arXiv", ArxivID: "2107.00001", DOI: "10.1038/s41586-021-03819-2"}, biblio.Article},
		{"JournalWithArxivCopy", research.RawPaper{Venue: "Journal of Machine Learning Research", ArxivID: "1910.10683"}, biblio.Article},
		{"PNAS", research.RawPaper{Venue: "Proceedings of the National Academy of Sciences", DOI: "10.1073/pnas.1518393112"}, biblio.Article},
		{"PNASAbbreviated", research.RawPaper{Venue: "Proc. Natl. Acad. Sci. U.S.A."}, biblio.Article},
		{"ProceedingsOfTheIEEE", research.RawPaper{Venue: "Proceedings of the IEEE", DOI: "10.1109/5.726791"}, biblio.Article},
		{"RoyalSociety", research.RawPaper{Venue: "Proceedings of the Royal Society of London. Series A", DOI: "10.1098/rspa.1927.0118"}, biblio.Article},
		{"PVLDB", research.RawPaper{DOI: "10.14778/1", Venue: "Proceedings of the VLDB Endowment"}, biblio.Article},
		{"PACMPL", research.RawPaper{Venue: "Proceedings of the ACM on Programming Languages"}, biblio.Article},
		{"TACL", research.RawPaper{Venue: "Transactions of the Association for Computational Linguistics"}, biblio.Article},
		{"CSHLJournal", research.RawPaper{Venue: "Genome Research", DOI: "10.1101/gr.229202.117"}, biblio.Article},
		// Conferences: by name or acronym, whether or not on arXiv too.
		{"Proceedings", research.RawPaper{DOI: "10.1145/1", Venue: "Proceedings of the ACM SIGMOD International Conference on Management of Data"}, biblio.Conference},
		{"NeurIPSWithArxiv", research.RawPaper{Venue: "Advances in Neural Information Processing Systems (NeurIPS)", ArxivID: "2005.14165"}, biblio.Conference},
		{"NeurIPSSemanticScholar", research.RawPaper{Venue: "Neural Information Processing Systems"}, biblio.Conference},
		{"ICLRWithArxiv", research.RawPaper{Venue: "International Conference on Learning Representations (ICLR)", ArxivID: "2010.11929"}, biblio.Conference},
		{"ICMLAcronym", research.RawPaper{Venue: "ICML"}, biblio.Conference},
		{"CVPR", research.RawPaper{Venue: "Computer Vision and Pattern Recognition", ArxivID: "1512.03385"}, biblio.Conference},
		{"ACLProceedings", research.RawPaper{Venue: "Proceedings of ACL", ArxivID: "1901.02860"}, biblio.Conference},
		{"ACLMeeting", research.RawPaper{Venue: "Annual Meeting of the Association for Computational Linguistics"}, biblio.Conference},
		{"ACLAnthologyDOI", research.RawPaper{DOI: "10.18653/v1/N19-1423"}, biblio.Conference},
		{"MICCAI", research.RawPaper{Venue: "Medical Image Computing and Computer-Assisted Intervention (MICCAI)", ArxivID: "1505.04597"}, biblio.Conference},
		{"OSDI", research.RawPaper{Venue: "USENIX Symposium on Operating Systems Design and Implementation (OSDI)"}, biblio.Conference},
		{"SocietyMeeting", research.RawPaper{Venue: "Proceedings of the Human Factors and Ergonomics Society Annual Meeting"}, biblio.Conference},
		{"ConferenceSeries", research.RawPaper{Venue: "Journal of Physics: Conference Series", DOI: "10.1088/1742-6596/1/1/012001"}, biblio.Conference},
		{"LNCS", research.RawPaper{Venue: "Lecture Notes in Computer Science", DOI: "10.1007/978-3-540-1"}, biblio.Conference},
		// Theses and reports say so in their venue.
		{"Thesis", research.RawPaper{Venue: "PhD thesis, Stanford University"}, biblio.Thesis},
		{"Report", research.RawPaper{Venue: "Keele University Technical Report TR/SE-0401"}, biblio.Report},
		// Nothing tells: a book chapter of a journal publisher, an arXiv
		// paper published somewhere unknown, no venue at all.
		{"PublisherBook", research.RawPaper{Venue: "Handbook of Sleep Research", DOI: "10.1016/B978-0-12-813743-7.00001-1"}, ""},
		{"SpringerBook", research.RawPaper{Venue: "Algorithms", DOI: "10.1007/3-540-12345-6_1"}, ""},
		{"ArxivPublishedSomewhere", research.RawPaper{Venue: "arXiv", ArxivID: "2101.00001", DOI: "10.1145/3292500.3330701"}, ""},
		{"Unknown", research.RawPaper{Title: "x"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, pipeline.PaperType(tt.p))
		})
	}
}

// TestExportTypesOfDemoPapers exports real records of the demo library and
// checks the entry type a reference manager sees: journal papers are
// articles (not @misc / GEN), conference papers inproceedings / CONF even
// when they are on arXiv too, and arXiv-only papers preprints.
func TestExportTypesOfDemoPapers(t *testing.T) {
	t.Parallel()
	papers, err := demo.Papers()
	require.NoError(t, err)
	byTitle := map[string]research.RawPaper{}
	for _, p := range papers {
		byTitle[p.Title] = p
	}
	tests := []struct {
		title     string
		want      string
		bibtex    string
		ris       string
		bibtexHas string
	}{
		{"Highly accurate protein structure prediction with AlphaFold", biblio.Article, "@article{", "TY  - JOUR", "journal = {Nature}"},
		{"Estimating the reproducibility of psychological science", biblio.Article, "@article{", "TY  - JOUR", "journal = {Science}"},
		{"Development and Applications of CRISPR-Cas9 for Genome Engineering", biblio.Article, "@article{", "TY  - JOUR", "journal = {Cell}"},
		{"Measuring inconsistency in meta-analyses", biblio.Article, "@article{", "TY  - JOUR", "journal = {BMJ}"},
		{"Attention Is All You Need", biblio.Conference, "@inproceedings{", "TY  - CONF", "booktitle = {Advances in Neural Information Processing Systems (NIPS)}"},
		{"BERT: Pre-training of Deep Bidirectional Transformers for Language Understanding", biblio.Conference, "@inproceedings{", "TY  - CONF", "booktitle = {Proceedings of NAACL-HLT}"},
		{"RoBERTa: A Robustly Optimized BERT Pretraining Approach", biblio.Preprint, "@misc{", "TY  - PREPRINT", "eprint = {1907.11692}"},
	}
	for _, tt := range tests {
		t.Run(tt.title, func(t *testing.T) {
			t.Parallel()
			p, ok := byTitle[tt.title]
			require.True(t, ok, "not in the demo library")
			rs := pipeline.RunState{Collection: &research.PaperCollection{Papers: []research.ScoredPaper{{RawPaper: p}}}}
			recs, err := pipeline.ExportRecords(rs, nil, pipeline.ExportReview)
			require.NoError(t, err)
			require.Equal(t, tt.want, recs[0].Type)
			var bib, ris bytes.Buffer
			require.NoError(t, codecs.WriteAll(&bib, biblio.BibTeX, recs))
			require.NoError(t, codecs.WriteAll(&ris, biblio.RIS, recs))
			require.True(t, strings.HasPrefix(bib.String(), tt.bibtex), bib.String())
			require.Contains(t, bib.String(), tt.bibtexHas)
			if tt.want != biblio.Preprint {
				require.NotContains(t, bib.String(), "howpublished")
			}
			require.True(t, strings.HasPrefix(ris.String(), tt.ris), ris.String())
		})
	}
}

// TestDemoLibraryTypes sweeps the whole demo library: no paper in a journal
// of a major publisher is left untyped, and no conference paper that is
// also on arXiv is taken for a preprint.
func TestDemoLibraryTypes(t *testing.T) {
	t.Parallel()
	papers, err := demo.Papers()
	require.NoError(t, err)
	brands := []string{"Nature", "Science", "Cell", "The Lancet", "BMJ", "JAMA", "New England Journal of Medicine", "PLoS", "PLOS"}
	conference := []string{"Conference", "Proceedings of ACL", "Proceedings of EMNLP", "Proceedings of NAACL", "(NIPS)", "(NeurIPS)", "(ICML)", "(ICLR)", "(CVPR)", "(ICCV)", "(ECCV)", "(MICCAI)"}
	for _, p := range papers {
		got := pipeline.PaperType(p)
		for _, b := range brands {
			if p.Venue == b || strings.HasPrefix(p.Venue, b+" ") {
				require.Equal(t, biblio.Article, got, "%s (%s, %s)", p.Title, p.Venue, p.DOI)
			}
		}
		for _, c := range conference {
			if strings.Contains(p.Venue, c) {
				require.Equal(t, biblio.Conference, got, "%s (%s)", p.Title, p.Venue)
			}
		}
		if p.DOI != "" && !strings.Contains(p.Venue, "arXiv") {
			require.NotEqual(t, biblio.Preprint, got, "%s (%s, %s)", p.Title, p.Venue, p.DOI)
		}
	}
}

// TestFinalCollectionLeavesOutIrrelevant: a paper marked irrelevant at the
// last review is not in the final collection (a researcher exporting their
// final set does not want rejected papers), while papers marked relevant
// and unmarked ones are, with the marks and notes exported alongside.
func TestFinalCollectionLeavesOutIrrelevant(t *testing.T) {
	t.Parallel()
	sk, _ := fakeSkills(fixedSource{"alpha"})
	var a, b string
	rs := drive(t, sk, pipeline.Options{}, func(_ engine.Checkpoint, p *pipeline.ResultPayload) engine.Decision {
		if p == nil {
			return engine.Decision{Action: engine.Approve}
		}
		a, b = p.Collection.Papers[0].ID, p.Collection.Papers[1].ID
		return engine.Decision{Action: engine.Approve, RevisedData: mustJSON(t, research.UserFeedback{
			MarkedRelevant: []string{a}, MarkedIrrelevant: []string{b}, PaperNotes: map[string]string{a: "keep", b: "off topic"}})}
	})
	require.NotNil(t, rs.Final)
	require.NoError(t, rs.Final.Validate())
	_, ok := rs.Final.Paper(b)
	require.False(t, ok, "the paper marked irrelevant is left out")
	for _, g := range rs.Final.Groups {
		require.NotContains(t, g.PaperIDs, b)
	}
	require.Len(t, rs.Final.Papers, len(rs.Collection.Papers)-1)
	require.Equal(t, []string{b}, []string{rs.MarkedIrrelevant[0].ID}, "the state still lists it apart")

	recs, err := pipeline.ExportRecords(rs, nil, pipeline.ExportFinal)
	require.NoError(t, err)
	require.Len(t, recs, len(rs.Final.Papers))
	require.Equal(t, a, recs[0].Paper.ID)
	require.Equal(t, biblio.Relevant, recs[0].Mark)
	require.Equal(t, "keep", recs[0].Note)
	review, err := pipeline.ExportRecords(rs, nil, pipeline.ExportReview)
	require.NoError(t, err)
	require.Equal(t, biblio.Irrelevant, review[1].Mark)
	require.Equal(t, "off topic", review[1].Note)
}
