package bibtex

import (
	"strings"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/unicode/norm"

	"quarry/internal/biblio"
)

// maxArgDepth bounds how deeply accent arguments ({\'{\'{...}}}) are
// decoded recursively, so a hostile file cannot exhaust the stack.
const maxArgDepth = 32

// toUTF8 returns s with every byte that is not part of valid UTF-8 decoded
// as Windows-1252, the encoding old .bib files and Windows tools use.
func toUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size <= 1 {
			b.WriteRune(charmap.Windows1252.DecodeByte(s[i]))
			i++
			continue
		}
		b.WriteString(s[i : i+size])
		i += size
	}
	return b.String()
}

// decodeText turns the raw text of a BibTeX field into plain Unicode: the
// text researchers see in a reference manager. In pages mode any run of
// hyphens is one hyphen ("1--10" → "1-10").
func decodeText(raw string, pages bool) string {
	raw = toUTF8(raw)
	if !strings.ContainsAny(raw, "\\{}$~-`'\t\n\r") {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	d := decoder{s: raw, pages: pages}
	d.run(&b, 0)
	return b.String()
}

// decodeVerbatim undoes only the backslash escapes of a verbatim field
// (url, doi, eprint), where LaTeX commands are not interpreted: people write
// both "10.1000/a_b" and "10.1000/a\_b" and mean the same DOI.
func decodeVerbatim(raw string) string {
	raw = toUTF8(raw)
	if strings.IndexByte(raw, '\\') < 0 {
		return raw
	}
	var b strings.Builder
	b.Grow(len(raw))
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == '\\' && i+1 < len(raw) && strings.IndexByte(verbatimEscapes, raw[i+1]) >= 0:
			b.WriteByte(raw[i+1])
			i++
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// verbatimEscapes are the characters a backslash escapes in a verbatim field.
const verbatimEscapes = "\\{}_%&#$~@"

type decoder struct {
	s     string
	i     int
	pages bool
	// math is inside $...$, where _ and ^ make sub- and superscripts.
	math bool
}

func (d *decoder) run(b *strings.Builder, depth int) {
	for d.i < len(d.s) {
		c := d.s[d.i]
		switch c {
		case '{', '}':
			d.i++
		case '$':
			d.dollar(b)
		case '_', '^':
			if !d.math {
				b.WriteByte(c)
				d.i++
				continue
			}
			d.i++
			d.script(b, c, depth)
		case '\\':
			d.command(b, depth)
		case '~':
			b.WriteByte(' ')
			d.i++
		case '-':
			d.dashes(b)
		case '`', '\'':
			if d.i+1 < len(d.s) && d.s[d.i+1] == c {
				if c == '`' {
					b.WriteString("“")
				} else {
					b.WriteString("”")
				}
				d.i += 2
				continue
			}
			b.WriteByte(c)
			d.i++
		case ' ', '\t', '\n', '\r':
			if d.math {
				d.i++ // TeX ignores blanks in math: $\left( 000\bar{1} \right)$ is (0001̄)
				continue
			}
			d.space(b)
		default:
			b.WriteByte(c)
			d.i++
		}
	}
}

// dollar reads $ or $$. In math it closes; outside it opens math only
// when a closing one follows, because an unpaired dollar is not math but
// the character itself ("costs $5", a tag path "ill$$Q") and dropping it
// would lose what the file says.
func (d *decoder) dollar(b *strings.Builder) {
	n := 1
	if d.i+1 < len(d.s) && d.s[d.i+1] == '$' {
		n = 2
	}
	if d.math {
		d.math = false
		d.i += n
		return
	}
	if closesMath(d.s[d.i+n:], n) {
		d.math = true
	} else {
		b.WriteString(d.s[d.i : d.i+n])
	}
	d.i += n
}

// closesMath reports whether s holds an unescaped run of n dollars.
func closesMath(s string, n int) bool {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '$':
			if n == 1 || i+1 < len(s) && s[i+1] == '$' {
				return true
			}
		}
	}
	return false
}

// space reads a run of blanks: blanks within a line are kept as they are,
// one line break is a space (a wrapped line) and a blank line is a paragraph
// break, as in LaTeX. A lone carriage return is an ordinary character.
func (d *decoder) space(b *strings.Builder) {
	start, lines := d.i, 0
	for d.i < len(d.s) {
		c := d.s[d.i]
		if c == '\n' {
			lines++
		} else if c == '\r' && d.i+1 < len(d.s) && d.s[d.i+1] == '\n' {
			// part of CRLF
		} else if c != ' ' && c != '\t' {
			break
		}
		d.i++
	}
	switch {
	case d.i == start:
		b.WriteByte(d.s[d.i])
		d.i++
	case lines == 0:
		b.WriteString(d.s[start:d.i])
	case lines == 1:
		b.WriteByte(' ')
	default:
		b.WriteString("\n\n")
	}
}

func (d *decoder) dashes(b *strings.Builder) {
	n := 0
	for d.i < len(d.s) && d.s[d.i] == '-' {
		n++
		d.i++
	}
	if d.pages {
		b.WriteByte('-')
		return
	}
	for ; n >= 3; n -= 3 {
		b.WriteString("—")
	}
	switch n {
	case 2:
		b.WriteString("–")
	case 1:
		b.WriteByte('-')
	}
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

func (d *decoder) skipBlanks() {
	for d.i < len(d.s) && (d.s[d.i] == ' ' || d.s[d.i] == '\t') {
		d.i++
	}
}

// command decodes one control sequence starting at the backslash.
func (d *decoder) command(b *strings.Builder, depth int) {
	d.i++
	if d.i >= len(d.s) {
		b.WriteByte('\\')
		return
	}
	c := d.s[d.i]
	if !isLetter(c) {
		// A control symbol: one character, which may be multi-byte.
		_, size := utf8.DecodeRuneInString(d.s[d.i:])
		sym := d.s[d.i : d.i+size]
		d.i += size
		switch c {
		case '\\':
			b.WriteByte('\n')
		case '\'', '`', '^', '"', '~', '=', '.':
			d.accent(b, symbolAccents[c], c, depth)
		case ' ', ',', ';', ':', '>', '\n', '\t':
			b.WriteByte(' ')
		case '-', '/', '!', '@', '\r':
		default:
			b.WriteString(sym)
		}
		return
	}
	start := d.i
	for d.i < len(d.s) && isLetter(d.s[d.i]) {
		d.i++
	}
	name := d.s[start:d.i]
	d.skipBlanks()
	if mark, ok := letterAccents[name]; ok {
		d.accent(b, mark, 0, depth)
		return
	}
	if s, ok := latexSymbols[name]; ok {
		b.WriteString(s)
		return
	}
	switch name {
	case "textsubscript", "textsuperscript", "textsubscr":
		mark := byte('_')
		if name == "textsuperscript" {
			mark = '^'
		}
		d.script(b, mark, depth)
		return
	case "url":
		if d.i < len(d.s) && d.s[d.i] == '{' {
			b.WriteString(d.group())
		}
		return
	case "enquote", "mkbibquote", "textquote":
		// Quotation marks around the argument, as LaTeX prints them.
		if d.i < len(d.s) && d.s[d.i] == '{' && depth < maxArgDepth {
			var sb strings.Builder
			sub := decoder{s: d.group(), pages: d.pages, math: d.math}
			sub.run(&sb, depth+1)
			b.WriteString("“" + sb.String() + "”")
		}
		return
	case "href":
		if d.i < len(d.s) && d.s[d.i] == '{' {
			d.group()
		}
		return
	case "text", "mbox", "hbox", "textrm", "textnormal", "textit", "textbf", "textsf", "texttt", "textup", "textsl", "emph":
		if d.math && d.i < len(d.s) && d.s[d.i] == '{' && depth < maxArgDepth {
			// Text inside math keeps its blanks.
			sub := decoder{s: d.group(), pages: d.pages}
			sub.run(b, depth+1)
		}
		return
	}
	// Any other command (formatting, a macro of the file's preamble, one
	// this decoder does not know) vanishes; its arguments stay as text, so
	// \mkbibemph{word} is "word" and \foo is nothing rather than "foo".
}

// script reads the argument after _ or ^ (x_2, x_{ij}, x^\prime) and
// writes it in Unicode sub- or superscript characters; an argument with a
// character Unicode has no such form of is written as plain text, as a
// reference manager shows rich text stripped of its markup (4$^{ème}$ →
// 4ème, x_{Q} → xQ).
func (d *decoder) script(b *strings.Builder, mark byte, depth int) {
	d.skipBlanks()
	if d.i >= len(d.s) || depth >= maxArgDepth {
		return
	}
	var arg string
	switch c := d.s[d.i]; c {
	case '{':
		inner := d.group()
		var sb strings.Builder
		sub := decoder{s: inner, pages: d.pages, math: d.math}
		sub.run(&sb, depth+1)
		arg = sb.String()
	case '\\':
		var sb strings.Builder
		d.command(&sb, depth+1)
		arg = sb.String()
	default:
		_, size := utf8.DecodeRuneInString(d.s[d.i:])
		arg = d.s[d.i : d.i+size]
		d.i += size
	}
	conv := biblio.Subscript
	if mark == '^' {
		conv = biblio.Superscript
	}
	if out, ok := conv(arg); ok {
		b.WriteString(out)
		return
	}
	if arg == "′" || arg == "′′" {
		b.WriteString(arg)
		return
	}
	b.WriteString(arg)
}

// group returns the raw text inside the group that opens at d.i and moves
// past it, skipping escaped braces the way the Reader's scanner does; an
// unclosed group runs to the end.
func (d *decoder) group() string {
	level := 0
	for j := d.i; j < len(d.s); j++ {
		switch d.s[j] {
		case '\\':
			if j+1 < len(d.s) && strings.IndexByte("{}\\", d.s[j+1]) >= 0 {
				j++
			}
		case '{':
			level++
		case '}':
			level--
			if level == 0 {
				inner := d.s[d.i+1 : j]
				d.i = j + 1
				return inner
			}
		}
	}
	inner := d.s[d.i+1:]
	d.i = len(d.s)
	return inner
}

// accent puts a combining mark on the first character of the argument that
// follows (\'e, \'{e}, \' e, \'\i, \c{c}). An empty argument yields the
// accent itself for the symbol accents (\~{} is a tilde).
func (d *decoder) accent(b *strings.Builder, mark rune, sym byte, depth int) {
	d.skipBlanks()
	var arg string
	if d.i < len(d.s) {
		switch c := d.s[d.i]; c {
		case '{':
			inner := d.group()
			if depth < maxArgDepth {
				var sb strings.Builder
				sub := decoder{s: inner, pages: d.pages}
				sub.run(&sb, depth+1)
				arg = sb.String()
			}
		case '\\':
			if depth < maxArgDepth {
				var sb strings.Builder
				d.command(&sb, depth+1)
				arg = sb.String()
			} else {
				d.i++
			}
		case '}':
		default:
			_, size := utf8.DecodeRuneInString(d.s[d.i:])
			arg = d.s[d.i : d.i+size]
			d.i += size
		}
	}
	if arg == "" {
		if sym != 0 {
			b.WriteByte(sym)
		}
		return
	}
	r, size := utf8.DecodeRuneInString(arg)
	switch r {
	case 'ı':
		r = 'i'
	case 'ȷ':
		r = 'j'
	}
	b.WriteString(norm.NFC.String(string(r) + string(mark)))
	b.WriteString(arg[size:])
}

// symbolAccents are the accents written with a punctuation command (\'e).
var symbolAccents = map[byte]rune{
	'\'': '\u0301', '`': '\u0300', '^': '\u0302', '"': '\u0308',
	'~': '\u0303', '=': '\u0304', '.': '\u0307',
}

// letterAccents are the accents written with a letter command (\c{c}).
var letterAccents = map[string]rune{
	"c": '\u0327', "v": '\u030C', "u": '\u0306', "H": '\u030B', "r": '\u030A',
	"k": '\u0328', "d": '\u0323', "b": '\u0331', "t": '\u0361',
	// MathSciNet's exports define \ocirc in their @preamble: a ring
	// above (Franc{\ocirc{u}} is Franců).
	"ocirc": '\u030A',
	// Math accents.
	// \bar is math only, and a title's bar is over a digit (the Miller
	// index (000\bar{1})), an overline in Unicode (U+0305, as Better
	// BibTeX reads it); a text macron is \=.
	"overline": '\u0305', "bar": '\u0305', "hat": '\u0302', "widehat": '\u0302', "tilde": '\u0303',
	"widetilde": '\u0303', "vec": '\u20D7', "dot": '\u0307', "ddot": '\u0308', "acute": '\u0301',
	"grave": '\u0300', "breve": '\u0306', "check": '\u030C', "underline": '\u0332',
}

// latexSymbols are the commands that stand for one character or word.
var latexSymbols = map[string]string{
	"ss": "ß", "SS": "SS", "o": "ø", "O": "Ø", "ae": "æ", "AE": "Æ", "aa": "å", "AA": "Å",
	"l": "ł", "L": "Ł", "i": "ı", "j": "ȷ", "oe": "œ", "OE": "Œ", "dh": "ð", "DH": "Ð",
	"th": "þ", "TH": "Þ", "dj": "đ", "DJ": "Đ", "ng": "ŋ", "NG": "Ŋ",
	"textbackslash": "\\", "textbraceleft": "{", "textbraceright": "}",
	"textasciitilde": "~", "textasciicircum": "^", "textunderscore": "_",
	"textbar": "|", "textless": "<", "textgreater": ">", "textdollar": "$",
	"textendash": "–", "textemdash": "—", "ldots": "…", "dots": "…", "textellipsis": "…",
	"textquoteleft": "‘", "textquoteright": "’", "textquotedblleft": "“", "textquotedblright": "”",
	"guillemotleft": "«", "guillemotright": "»", "guillemetleft": "«", "guillemetright": "»",
	"textregistered": "®", "texttrademark": "™", "textcopyright": "©", "copyright": "©",
	"textdegree": "°", "S": "§", "P": "¶", "pounds": "£", "texteuro": "€", "euro": "€",
	"newline": "\n", "par": "\n\n", "slash": "/", "textperiodcentered": "·",
	"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "epsilon": "ε", "varepsilon": "ε",
	"zeta": "ζ", "eta": "η", "theta": "θ", "vartheta": "ϑ", "iota": "ι", "kappa": "κ",
	"lambda": "λ", "mu": "μ", "nu": "ν", "xi": "ξ", "pi": "π", "rho": "ρ", "varrho": "ϱ",
	"sigma": "σ", "varsigma": "ς", "tau": "τ", "upsilon": "υ", "phi": "φ", "varphi": "φ",
	"chi": "χ", "psi": "ψ", "omega": "ω", "Gamma": "Γ", "Delta": "Δ", "Theta": "Θ",
	"Lambda": "Λ", "Xi": "Ξ", "Pi": "Π", "Sigma": "Σ", "Upsilon": "Υ", "Phi": "Φ",
	"Psi": "Ψ", "Omega": "Ω",
	"times": "×", "pm": "±", "mp": "∓", "leq": "≤", "le": "≤", "geq": "≥", "ge": "≥",
	"neq": "≠", "ne": "≠", "approx": "≈", "sim": "∼", "infty": "∞", "cdot": "·",
	"to": "→", "rightarrow": "→", "leftarrow": "←", "leftrightarrow": "↔", "circ": "∘",
	"prime": "′", "ell": "ℓ", "partial": "∂", "sum": "∑", "prod": "∏", "int": "∫",
	"sqrt": "√", "in": "∈", "log": "log", "exp": "exp", "ln": "ln",
	"sin": "sin", "cos": "cos", "tan": "tan", "max": "max", "min": "min", "lim": "lim", "det": "det",
	"LaTeX": "LaTeX", "TeX": "TeX", "BibTeX": "BibTeX", "LaTeXe": "LaTeX2e",
	"textquotesingle": "'", "textquotedbl": "\"", "textasciigrave": "`", "textsterling": "£",
	"textmu": "µ", "textpm": "±", "texttimes": "×", "textbullet": "•", "textdagger": "†",
	"quad": " ", "qquad": " ", "enspace": " ", "thinspace": " ", "space": " ", "nobreakspace": " ",
	"langle": "⟨", "rangle": "⟩", "lbrace": "{", "rbrace": "}", "lbrack": "[", "rbrack": "]",
	"backslash": "\\", "vert": "|", "mid": "|", "lt": "<", "gt": ">", "cdots": "⋯", "vdots": "⋮",
	"ast": "∗", "star": "⋆", "cap": "∩", "cup": "∪", "subset": "⊂", "supset": "⊃", "subseteq": "⊆",
	"supseteq": "⊇", "forall": "∀", "exists": "∃", "nabla": "∇", "hbar": "ℏ", "propto": "∝",
	"equiv": "≡", "perp": "⊥", "parallel": "∥", "div": "÷", "uparrow": "↑", "downarrow": "↓",
	"Rightarrow": "⇒", "Leftarrow": "⇐", "Leftrightarrow": "⇔", "mapsto": "↦", "dagger": "†",
	"dag": "†", "ddag": "‡", "bullet": "•", "aleph": "ℵ", "emptyset": "∅", "varnothing": "∅",
	"neg": "¬", "lnot": "¬", "land": "∧", "lor": "∨", "wedge": "∧", "vee": "∨", "oplus": "⊕",
	"otimes": "⊗", "leqslant": "⩽", "geqslant": "⩾", "ll": "≪", "gg": "≫", "simeq": "≃",
	"cong": "≅", "lesssim": "≲", "gtrsim": "≳", "notin": "∉", "angstrom": "Å",
	"varpi": "ϖ", "degree": "°", "deg": "°", "perthousand": "‰", "textperthousand": "‰",
	"sharp": "♯", "flat": "♭", "natural": "♮", "checkmark": "✓", "square": "□", "Box": "□",
	"triangle": "△",
}
