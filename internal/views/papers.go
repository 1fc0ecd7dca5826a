package views

import (
	"net/url"
	"strings"

	"quarry/internal/research"
)

// paperLink picks the most durable link for a paper: DOI, then arXiv, then
// the source's URL. Only http(s) URLs are linked, so a record cannot smuggle
// a javascript: link into the page.
func paperLink(p research.ScoredPaper) string {
	switch {
	case p.DOI != "":
		return "https://doi.org/" + url.PathEscape(strings.TrimSpace(p.DOI))
	case p.ArxivID != "":
		return "https://arxiv.org/abs/" + url.PathEscape(strings.TrimSpace(p.ArxivID))
	}
	u, err := url.Parse(strings.TrimSpace(p.URL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return ""
	}
	return u.String()
}

// paperSources lists the sources a paper was found in.
func paperSources(p research.ScoredPaper) []string {
	if len(p.Sources) > 0 {
		return p.Sources
	}
	if p.Source != "" {
		return []string{p.Source}
	}
	return nil
}
