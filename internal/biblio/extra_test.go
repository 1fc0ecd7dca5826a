package biblio_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
)

func TestExtraFieldsRoundTrip(t *testing.T) {
	r := biblio.Record{Extra: []byte(`{"bibtex_key":"k1","categories":["a","b"]}`)}
	biblio.SetExtra(&r, map[string]string{biblio.ExtraPublisher: "Springer", biblio.ExtraISBN: "978-3-16-148410-0"})
	got := biblio.ExtraFields(r)
	require.Equal(t, map[string]string{"bibtex_key": "k1", "publisher": "Springer", "isbn": "978-3-16-148410-0"}, got)
	require.Contains(t, string(r.Extra), `"categories":["a","b"]`, "non-string entries are kept")
	biblio.SetExtra(&r, map[string]string{biblio.ExtraPublisher: ""})
	require.NotContains(t, biblio.ExtraFields(r), biblio.ExtraPublisher)
}

func TestEditorsRoundTrip(t *testing.T) {
	eds := biblio.SplitEditors("Van de Walle, Rik and Andrea Rossi AND Kee Song, Wong")
	require.Len(t, eds, 3)
	require.Equal(t, "Kee Song", eds[2].Last)
	require.Equal(t, "Van de Walle", eds[0].Last)
	require.Equal(t, "Rossi", eds[1].Last)
	require.Equal(t, eds, biblio.SplitEditors(biblio.JoinEditors(eds)))
}
