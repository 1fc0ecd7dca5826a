package app_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"quarry/internal/biblio"
	"quarry/internal/biblio/codecs"
	"quarry/internal/fault"
)

// defaultImport is Config.Import when nothing sets it.
func defaultImport() codecs.Options {
	return codecs.Options{Limits: biblio.Limits{MaxLine: biblio.DefaultMaxLine, MaxRecord: biblio.DefaultMaxRecord},
		Gzip: codecs.GzipLimit{Ratio: codecs.DefaultGzipRatio, Floor: codecs.DefaultGzipFloor}}
}

// TestImportLimitSettings: the read limits come from the environment (or
// the file) in MiB, and a bad value names its variable.
func TestImportLimitSettings(t *testing.T) {
	t.Parallel()
	cfg, err := load(t, map[string]string{"QUARRY_IMPORT_MAX_LINE_MB": "2", "QUARRY_IMPORT_MAX_RECORD_MB": "16",
		"QUARRY_IMPORT_GZIP_RATIO": "500", "QUARRY_IMPORT_GZIP_FLOOR_MB": "256"})
	require.NoError(t, err)
	require.Equal(t, codecs.Options{Limits: biblio.Limits{MaxLine: 2 << 20, MaxRecord: 16 << 20},
		Gzip: codecs.GzipLimit{Ratio: 500, Floor: 256 << 20}}, cfg.Import)

	_, err = load(t, map[string]string{"QUARRY_IMPORT_MAX_LINE_MB": "0"})
	require.Equal(t, fault.EInvalid, fault.ErrorCode(err))
	require.Contains(t, fault.ErrorFields(err), "QUARRY_IMPORT_MAX_LINE_MB")
}
