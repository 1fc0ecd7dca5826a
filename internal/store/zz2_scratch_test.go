package store

import (
	"database/sql"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"
)

func zzcpu() float64 {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return float64(ru.Utime.Nano()+ru.Stime.Nano()) / 1e9
}

func TestZZFTSBatches(t *testing.T) {
	path := os.Getenv("ZZDB")
	if path == "" {
		t.Skip()
	}
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)"+os.Getenv("ZZC")+"")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	ex := func(q string) {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(q, err)
		}
	}
	ex(`DROP TABLE IF EXISTS f`)
	ex(`CREATE VIRTUAL TABLE f USING fts5(title, abstract, authors, venue, compounds, content='papers', content_rowid='docid', tokenize='porter unicode61 remove_diacritics 2')`)
	for _, q := range strings.Split(os.Getenv("ZZSQL"), ";;") {
		if q != "" {
			ex(q)
		}
	}
	step := 10000
	fmt.Sscan(os.Getenv("ZZSTEP"), &step)
	c0, t0 := zzcpu(), time.Now()
	for lo := 0; lo < 170000; lo += step {
		ex(fmt.Sprintf(`INSERT INTO f(rowid, title, abstract, authors, venue, compounds) SELECT docid, title, abstract, authors, venue, coalesce(compounds,'') FROM papers WHERE docid > %d AND docid <= %d`, lo, lo+step))
	}
	t.Logf("batches: cpu=%.1fs wall=%.1fs", zzcpu()-c0, time.Since(t0).Seconds())
	c0, t0 = zzcpu(), time.Now()
	for _, q := range strings.Split(os.Getenv("ZZAFTER"), ";;") {
		if q != "" {
			ex(q)
		}
	}
	var n int
	db.QueryRow(`SELECT count(*) FROM f_data`).Scan(&n)
	t.Logf("after: cpu=%.1fs wall=%.1fs data rows %d", zzcpu()-c0, time.Since(t0).Seconds(), n)
}
