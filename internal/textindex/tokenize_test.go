package textindex

import (
	"bufio"
	"compress/gzip"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"quarry/internal/shareddata"
)

// The tests here hold Tokenize to the real FTS5 (modernc.org/sqlite, the
// SQLite Quarry runs): they index texts in an fts5 table with the
// papers_fts tokenize spec and read back, through an fts5vocab 'instance'
// table, every term FTS5 stored at every position.

// ftsOracle is an FTS5 table with papers_fts's tokenizer and its
// instance vocabulary.
type ftsOracle struct {
	db *sql.DB
}

func newOracle(t testing.TB) *ftsOracle {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(t.TempDir(), "oracle.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	_, err = db.Exec(`CREATE VIRTUAL TABLE t USING fts5(x, tokenize = 'porter unicode61 remove_diacritics 2')`)
	require.NoError(t, err)
	_, err = db.Exec(`CREATE VIRTUAL TABLE v USING fts5vocab(t, instance)`)
	require.NoError(t, err)
	return &ftsOracle{db: db}
}

// terms indexes texts (replacing what the table held) and returns, per
// text, the terms FTS5 stored ordered by position. A position FTS5 left
// without a term shows as "<missing>", so gaps cannot hide.
func (o *ftsOracle) terms(t testing.TB, texts []string) [][]string {
	t.Helper()
	tx, err := o.db.Begin()
	require.NoError(t, err)
	_, err = tx.Exec(`DELETE FROM t`)
	require.NoError(t, err)
	stmt, err := tx.Prepare(`INSERT INTO t (rowid, x) VALUES (?, ?)`)
	require.NoError(t, err)
	for i, text := range texts {
		_, err = stmt.Exec(i+1, text)
		require.NoError(t, err)
	}
	require.NoError(t, stmt.Close())
	require.NoError(t, tx.Commit())

	byPos := make([]map[int]string, len(texts))
	rows, err := o.db.Query(`SELECT doc, offset, term FROM v`)
	require.NoError(t, err)
	defer rows.Close()
	for rows.Next() {
		var doc, off int
		var term []byte
		require.NoError(t, rows.Scan(&doc, &off, &term))
		m := byPos[doc-1]
		if m == nil {
			m = map[int]string{}
			byPos[doc-1] = m
		}
		_, dup := m[off]
		require.False(t, dup, "two terms at one position of text %d", doc)
		m[off] = string(term)
	}
	require.NoError(t, rows.Err())

	out := make([][]string, len(texts))
	for i, m := range byPos {
		last := -1
		for off := range m {
			last = max(last, off)
		}
		for off := 0; off <= last; off++ {
			term, ok := m[off]
			if !ok {
				term = "<missing>"
			}
			out[i] = append(out[i], term)
		}
	}
	return out
}

// mine tokenizes each text with one reused Tokenizer, as an index would
// (its memo in use after the first few thousand tokens). It keeps the
// strings emit gets, as Tokens allows.
func mine(texts []string) [][]string {
	var tok Tokenizer
	out := make([][]string, len(texts))
	for i, text := range texts {
		tok.Tokens(text, func(term string) { out[i] = append(out[i], term) })
	}
	return out
}

// mineFresh tokenizes each text with Tokenize, as a query would (no memo).
func mineFresh(texts []string) [][]string {
	out := make([][]string, len(texts))
	for i, text := range texts {
		Tokenize(text, func(term string) { out[i] = append(out[i], term) })
	}
	return out
}

// compare checks Tokenize against FTS5 on texts, reporting the first
// differences, and returns how many terms it compared.
func compare(t *testing.T, o *ftsOracle, texts []string) int {
	t.Helper()
	want := o.terms(t, texts)
	got, fresh := mine(texts), mineFresh(texts)
	diffs, terms := 0, 0
	for i := range texts {
		terms += len(want[i])
		if slices.Equal(got[i], want[i]) && slices.Equal(fresh[i], want[i]) {
			continue
		}
		diffs++
		if diffs <= 10 {
			t.Errorf("text %q:\n got  %q\n (fresh Tokenizer %q)\n fts5 %q", clip(texts[i]), got[i], fresh[i], want[i])
		}
	}
	require.Zero(t, diffs, "texts whose terms differ from FTS5's, of %d", len(texts))
	return terms
}

func clip(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}

func TestTokenizeMatchesFTS5OnEdgeCases(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("internationalization", 4) // 80 bytes: past porter's limit
	texts := []string{
		"",
		"   ",
		"Hello, World!",
		"The QUICK brown Fox jumps over the LAZY dog.",
		// Accents and remove_diacritics 2.
		"café naïve résumé Ångström façade São Paulo Zürich Dvořák Łódź Øresund",
		"crème brûlée, jalapeño, coöperate, Ægir, œuvre",
		"e\u0301 a\u0300 o\u0308 combining: cafe\u0301s n\u0303o",
		"\u0301leading mark, mid\u0301dle, \u0345alone, a\u0345",
		// Ligatures, sharp s, special case folds.
		"ﬁnance ﬂow eﬃcient Straße STRASSE ẞ İstanbul ıi Σίσυφος ΣΑΣ",
		// CJK, Japanese, Korean, Thai, Arabic, Hebrew, Devanagari.
		"深度学习 模型 中文分词 日本語のテキスト カタカナ 한국어 텍스트 ภาษาไทย العربية עברית हिन्दी",
		// Digits with letters.
		"GPT-4o, 3D, 2nd, x86_64, COVID-19, 1.5B parameters, 10k, v2.0, ResNet50, H2O, 1e-5",
		// Apostrophes and hyphens.
		"don't can’t it's O'Brien rock'n'roll pre-training state-of-the-art — en–dash",
		// Emoji and zero-width characters.
		"emoji 😀 in👍side 👨‍👩‍👧 family ❤️ hearts 🇫🇷 flag",
		"zero\u200bwidth joi\u200dner non\u200cjoiner soft\u00adhyphen bom\ufeffmark word\u2060joiner",
		"no\u00a0break space\u2009thin\u3000ideographic",
		// Math symbols, Greek, Cyrillic, letterlike.
		"∑ x² ≤ ∞ α+β=γ ∂f/∂x √2 ℝⁿ ℵ₀ ½ ⅓ Ⅻ ①②",
		"Москва МОСКВА ёлка Ёлка Україна ΑΒΓΔ αβγδ ΆΈΉ ϐϑ",
		// Short tokens (porter leaves < 3 bytes alone).
		"a an as is us ss s es ies sss eed bed fed ed ing sing ring aing",
		// Porter rules.
		"caresses ponies ties caress cats feed agreed plastered bled motoring sing conflated troubled sized hopping tanned falling hissing fizzed failing filing happy sky",
		"relational conditional rational valenci hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization predication operator feudalism decisiveness hopefulness callousness formaliti sensitiviti sensibiliti",
		"triplicate formative formalize electriciti electrical hopeful goodness",
		"revival allowance inference airliner gyroscopic adjustable defensible irritant replacement adjustment dependent adoption homologou communism activate angulariti homologous effective bowdlerize",
		"probate rate cease controll roll generalization generalizations organizational",
		"ational tional ization izations nationalization",
		long + " " + strings.ToUpper(long),
		strings.Repeat("ab", 32) + "ing " + strings.Repeat("ab", 31) + "ing " + strings.Repeat("é", 40) + "s",
		// Non-ASCII inside porter's range.
		"cafés naïvetés résumés ökonomische",
		// Invalid UTF-8, surrogates, noncharacters, out-of-range code points.
		"bad\x80byte lone\xc3 over\xc0\xaflong sur\xed\xa0\x80rogate non\xef\xbf\xbechar \xff\xfe end\xf4\x90\x80\x80x \xf8\x88\x80\x80\x80five",
		"deseret 𐐀𐐁 𐐨 plane16 \U00100000\U0010FFFD unassigned \u0378\u0379 private \ue000\uf8ff",
		"tab\tnewline\nreturn\rnul\x00byte control\x01\x1f del\x7f",
		"under_score dot.dot slash/slash back\\slash at@sign hash#tag dollar$ percent% caret^ amp&er star* paren(s) plus+ equal= brace{s} pipe| semi; colon: quote\" lt< gt> question? tilde~ grave`",
	}
	o := newOracle(t)
	n := compare(t, o, texts)
	t.Logf("edge cases: %d texts, %d terms, 0 differences", len(texts), n)
}

// TestTokenizeMatchesFTS5OnEveryCodePoint puts every code point from U+0080
// to U+10FFFF (surrogates included, as the raw bytes SQLite would read)
// between letters, so each one's category, folding and diacritic handling
// is compared with FTS5's tables.
func TestTokenizeMatchesFTS5OnEveryCodePoint(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("exhaustive code point comparison skipped in -short mode")
	}
	const perText = 2048
	var texts []string
	var sb strings.Builder
	for c := rune(0x80); c <= 0x10FFFF; c++ {
		sb.WriteString("q")
		sb.Write(rawUTF8(c))
		sb.WriteString("z ")
		sb.Write(rawUTF8(c))
		sb.WriteString(" ")
		if (c+1)%perText == 0 || c == 0x10FFFF {
			texts = append(texts, sb.String())
			sb.Reset()
		}
	}
	o := newOracle(t)
	n := compare(t, o, texts)
	t.Logf("every code point: %d texts, %d terms, 0 differences", len(texts), n)
}

// rawUTF8 encodes c in UTF-8's bit layout even where Go would not
// (surrogates), so the bytes reach SQLite as written.
func rawUTF8(c rune) []byte {
	switch {
	case c < 0x80:
		return []byte{byte(c)}
	case c < 0x800:
		return []byte{0xC0 | byte(c>>6), 0x80 | byte(c&0x3F)}
	case c < 0x10000:
		return []byte{0xE0 | byte(c>>12), 0x80 | byte(c>>6&0x3F), 0x80 | byte(c&0x3F)}
	}
	return []byte{0xF0 | byte(c>>18), 0x80 | byte(c>>12&0x3F), 0x80 | byte(c>>6&0x3F), 0x80 | byte(c&0x3F)}
}

// TestTokenizeMatchesFTS5OnRandomText compares random strings over an
// alphabet mixing the characters that matter to the tokenizer: separators,
// case, digits, porter suffixes, accents, marks, scripts and invalid bytes.
func TestTokenizeMatchesFTS5OnRandomText(t *testing.T) {
	t.Parallel()
	alphabet := []string{
		" ", " ", " ", "-", "'", ".", ",", "_", "/", "\t", "\n", "\u00a0", "\u200b", "\u200d", "\ufeff",
		"a", "e", "i", "o", "u", "y", "s", "t", "l", "n", "d", "g", "b", "z", "c", "r", "m", "w", "x",
		"A", "E", "S", "Y", "Z", "L", "0", "1", "9",
		"ing", "ed", "es", "ies", "sses", "ational", "tion", "ization", "ness", "ful", "ment", "ous", "ive", "ize", "ll", "ate", "iti", "eed", "ence", "able", "al", "er", "ic", "ism", "bl", "at", "iz",
		"é", "É", "ü", "ñ", "ø", "Ł", "ß", "ẞ", "ﬁ", "œ", "Æ", "ı", "İ", "\u0301", "\u0308", "\u0345", "\u0327",
		"α", "Σ", "ς", "ж", "Ё", "深", "学", "の", "한", "ก", "ع", "ה", "ह", "\u094d",
		"😀", "👍", "\u2764", "\ufe0f", "∑", "²", "½", "Ⅻ", "①", "𐐀", "\U00100000", "\ue000", "\u0378",
		"\x80", "\xc3", "\xff", "\xed\xa0\x80", "\xc0\xaf", "\xef\xbf\xbe",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const count = 5000
	texts := make([]string, count)
	for i := range texts {
		var sb strings.Builder
		for range 1 + rng.IntN(60) {
			sb.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts[i] = sb.String()
	}
	o := newOracle(t)
	n := compare(t, o, texts)
	t.Logf("random: %d texts, %d terms, 0 differences", count, n)
}

// corpusRecord is the part of a shared-corpus line the tests read.
type corpusRecord struct {
	Title    string `json:"title"`
	Abstract string `json:"abstract"`
}

// readCorpus returns up to limit records' titles and abstracts (two texts
// per record, empty ones left out), taking records from each shared corpus
// file in turn; it skips the test when the corpus is absent.
func readCorpus(t testing.TB, limit int) []string {
	t.Helper()
	files := shareddata.CorpusFiles()
	for _, f := range files {
		if _, err := os.Stat(f); err != nil {
			t.Skipf("shared corpus not present (%v); this test needs %s", err, shareddata.Dir("corpus"))
		}
	}
	var texts []string
	for _, f := range files {
		fh, err := os.Open(f)
		require.NoError(t, err)
		zr, err := gzip.NewReader(fh)
		require.NoError(t, err)
		sc := bufio.NewScanner(zr)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for n := 0; n < limit/len(files) && sc.Scan(); n++ {
			var r corpusRecord
			require.NoError(t, json.Unmarshal(sc.Bytes(), &r), "%s line %d", f, n+1)
			for _, s := range []string{r.Title, r.Abstract} {
				if s != "" {
					texts = append(texts, s)
				}
			}
		}
		require.NoError(t, sc.Err())
		require.NoError(t, fh.Close())
	}
	return texts
}

func TestTokenizeMatchesFTS5OnCorpus(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("corpus comparison skipped in -short mode")
	}
	const records = 20000
	texts := readCorpus(t, records)
	o := newOracle(t)
	terms := 0
	const batch = 4000
	for start := 0; start < len(texts); start += batch {
		terms += compare(t, o, texts[start:min(start+batch, len(texts))])
	}
	t.Logf("corpus: %d records, %d texts (titles and abstracts), %d terms, 0 differences", records, len(texts), terms)
}

// TestASCIITableMatchesCategories checks the hand-written ASCII table
// against what sqlite3Fts5UnicodeAscii derives from the category tables.
func TestASCIITableMatchesCategories(t *testing.T) {
	t.Parallel()
	for c := range uint32(128) {
		want := byte(0)
		if c != 0 && isTokenRune(c) {
			want = byte(unicodeFold(c))
		}
		require.Equal(t, want, asciiFold[c], "ASCII %q", rune(c))
	}
}

func TestTokensKeepsNoStateBetweenTexts(t *testing.T) {
	t.Parallel()
	var tok Tokenizer
	var got []string
	for _, text := range []string{"Running FASTER", "", "über-cafés"} {
		tok.Tokens(text, func(term string) { got = append(got, term) })
	}
	require.Equal(t, []string{"run", "faster", "uber", "cafe"}, got)
	var viaFunc []string
	Tokenize("Running FASTER über-cafés", func(term string) { viaFunc = append(viaFunc, term) })
	require.Equal(t, got, viaFunc)
}

func ExampleTokenize() {
	Tokenize("Pre-training Large Language Models: the Résumé of Ideas", func(term string) {
		fmt.Print(term, " ")
	})
	fmt.Println()
	// Output: pre train larg languag model the resum of idea
}
