package views

// exportFormats labels the export formats for people.
func exportFormats() []struct{ Value, Label string } {
	return []struct{ Value, Label string }{{"bibtex", "BibTeX"}, {"ris", "RIS"}, {"csljson", "CSL-JSON"}, {"csv", "CSV"}}
}
