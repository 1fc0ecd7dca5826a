package bibtex

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDecodeText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{`\'e \'{e} {\'e} \' e`, "é é é é"},
		{"\\\"o \\^o \\`a \\~n \\=a \\.z", "ö ô à ñ ā ż"},
		{`\c{c} \c c \v{s} \u{g} \H{o} \r{a} \k{a} \d{s}`, "ç ç š ğ ő å ą ṣ"},
		{`\'\i{} \'{\i} \"{\i} \'\i x`, "í í ï íx"},
		{`\ss \o \O \ae \AE \aa \AA \l \L \i \oe \OE`, "ßøØæÆåÅłŁıœŒ"},
		{`\ss{}e \o{}r`, "ße ør"},
		{`\& \% \$ \# \_ \{ \}`, "& % $ # _ { }"},
		{`a--b a---b a-b`, "a–b a—b a-b"},
		{`a~b`, "a b"},
		{`{DNA} {{RNA}} M{\"u}ller`, "DNA RNA Müller"},
		{`\emph{x} \textit{y} \textbf{z} {\em w} \textsc{Caps}`, "x y z w Caps"},
		{`$x^2$ and $\alpha$`, "x² and α"},
		{"``quoted'' `single'", "“quoted” `single'"},
		{`\~{} \^{}`, "~ ^"},
		{`\textbackslash{}n \textbraceleft{}\textbraceright{}`, `\n {}`},
		{`\url{http://a.org/~x_y} \href{http://a}{text}`, "http://a.org/~x_y text"},
		{`\LaTeX{} and \TeX`, "LaTeX and TeX"},
		{"one\ntwo", "one two"},
		{"one\n   \n  two", "one\n\ntwo"},
		{"a  \tb", "a  \tb"},
		{`line\\break`, "line\nbreak"},
		{"a\r\nb", "a b"},
		{"a\rb", "a\rb"},
		{`\`, `\`},
		{`\'`, "'"},
		{`\'{}`, "'"},
		{"-{}-", "--"},
		{"\xe9t\xe9 \x93q\x94", "été “q”"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tt.want, decodeText(tt.in, false))
		})
	}
}

func TestDecodePages(t *testing.T) {
	t.Parallel()
	require.Equal(t, "1-10", decodeText("1--10", true))
	require.Equal(t, "1-10", decodeText("1---10", true))
	require.Equal(t, "e1234", decodeText("e1234", true))
}

func TestDecodeVerbatim(t *testing.T) {
	t.Parallel()
	require.Equal(t, "http://a.org/~x_y%20z", decodeVerbatim(`http://a.org/~x\_y\%20z`))
	require.Equal(t, `a\b{c}`, decodeVerbatim(`a\\b\{c\}`))
	require.Equal(t, `a\qb`, decodeVerbatim(`a\qb`))
	require.Equal(t, "a\r\nb", decodeVerbatim("a\r\nb"))
}

func TestEscapeInverse(t *testing.T) {
	t.Parallel()
	tests := []string{
		`& % $ # _ { } ~ ^ \ \\ \'e`,
		"en--dash em---dash ``q'' '' `` -",
		"para one\n\npara two\nline\n\n\nthree\n\n  four\n\n@five",
		"tabs\tand  spaces\r\nand cr\r",
		"Müller ☃ 日本語 $x^2$",
		"{unbalanced",
		"trailing backslash \\",
	}
	for _, s := range tests {
		t.Run(s, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, s, decodeText(escape(s), false))
			require.Equal(t, s, decodeVerbatim(escapeVerbatim(s)))
		})
	}
}

// Math and commands the decoder does not know (issue 22, item 4): sub- and
// superscripts become Unicode, known symbols theirs, unknown commands
// vanish and keep their arguments.
func TestDecodeMathAndUnknownCommands(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{Cu$_2$O}`:                             "Cu₂O",
		`H$_{2}$O and x$^{-1}$`:                 "H₂O and x⁻¹",
		`$\langle 00\overline{1}\rangle$`:       "⟨001̅⟩",
		`a\quad b`:                              "a b",
		`\mkbibemph{word} and \foo bar`:         "word and bar",
		`Fe\textsubscript{3}O\textsubscript{4}`: "Fe₃O₄",
		`$x_{Q}$`:                               "xQ",
		`snake_case`:                            "snake_case",
		`D\textquotesingle aspremont`:           "D'aspremont",
	} {
		require.Equal(t, want, decodeText(in, false), in)
	}
}

// An unpaired dollar is the character itself, not the start of math that
// swallows it; a paired one still makes math.
func TestUnpairedDollarIsKept(t *testing.T) {
	for in, want := range map[string]string{
		"Mentally ill$$QMentally ill":   "Mentally ill$$QMentally ill",
		"costs $5 a day":                "costs $5 a day",
		"{Cu$_2$O}":                     "Cu₂O",
		"$$x^2$$ and more":              "x² and more",
		`a \$ b $c_1$`:                  "a $ b c₁",
		`{$\left( 000\bar{1} \right)$}`: "(0001\u0305)",
		`$x \text{if and only if} y$`:   "xif and only ify",
		`$a \mbox{ and } b$`:            "a and b",
	} {
		require.Equal(t, want, decodeText(in, false), in)
	}
}
