package textenc_test

import (
	"bytes"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/text/encoding/japanese"
	"golang.org/x/text/encoding/simplifiedchinese"
	"golang.org/x/text/encoding/unicode"

	"quarry/internal/biblio/textenc"
	"quarry/internal/fault"
)

const chinese = "@article{kaisa2020,\n  title = {凯撒密码在古典密码学中的应用研究},\n  author = {张伟 and 李娜},\n  journal = {计算机科学与技术学报},\n  year = {2020},\n  abstract = {本文研究了凯撒密码的历史、原理及其在现代密码学教学中的应用，并分析了其安全性。}\n}\n"

func decode(t *testing.T, in []byte, name string) (string, string) {
	t.Helper()
	r, enc, err := textenc.Decode(bytes.NewReader(in), name)
	require.NoError(t, err)
	out, err := io.ReadAll(r)
	require.NoError(t, err)
	return string(out), enc
}

// TestDetect: GBK, Shift_JIS and UTF-16 (with and without a mark) are
// detected and decoded; UTF-8 passes unchanged.
func TestDetect(t *testing.T) {
	t.Parallel()
	gbk, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte(chinese))
	require.NoError(t, err)
	got, enc := decode(t, gbk, "")
	require.Equal(t, chinese, got)
	require.Equal(t, "gb18030", enc)

	jp := "TY  - JOUR\nTI  - 日本語の論文タイトルについての研究と考察\nAU  - 山田, 太郎\nAB  - これは日本語で書かれた抄録です。文字コードはシフトJISです。\nER  - \n"
	sjis, err := japanese.ShiftJIS.NewEncoder().Bytes([]byte(jp))
	require.NoError(t, err)
	got, enc = decode(t, sjis, textenc.Auto)
	require.Equal(t, jp, got)
	require.Equal(t, "shift_jis", enc)

	u16, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().Bytes([]byte(jp))
	require.NoError(t, err)
	got, enc = decode(t, u16, "")
	require.Equal(t, jp, got)
	require.Equal(t, "utf-16le", enc)

	u16be, err := unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM).NewEncoder().Bytes([]byte("TY  - JOUR\nTI  - No mark\nER  - \n"))
	require.NoError(t, err)
	got, enc = decode(t, u16be, "")
	require.Equal(t, "TY  - JOUR\nTI  - No mark\nER  - \n", got)
	require.Equal(t, "utf-16be", enc)

	got, enc = decode(t, []byte(chinese), "")
	require.Equal(t, chinese, got)
	require.Equal(t, textenc.UTF8, enc)
}

// TestNamedEncoding: a named encoding is used as given; an unknown name
// is an EInvalid error naming the field.
func TestNamedEncoding(t *testing.T) {
	t.Parallel()
	gbk, err := simplifiedchinese.GBK.NewEncoder().Bytes([]byte("凯撒"))
	require.NoError(t, err)
	got, enc := decode(t, gbk, "GBK")
	require.Equal(t, "凯撒", got)
	require.Equal(t, "gbk", enc)
	got, _ = decode(t, []byte{0xE9}, "latin1")
	require.Equal(t, "é", got)
	_, _, err = textenc.Decode(bytes.NewReader(nil), "klingon")
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
}
