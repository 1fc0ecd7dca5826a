// Package notifytest is a fake SMTP server on loopback for tests of what
// Quarry e-mails: it accepts every message and hands it over. Only tests
// import it.
package notifytest

import (
	"bufio"
	"io"
	"net"
	"strings"
	"testing"
)

// Mail is one message the fake server accepted.
type Mail struct {
	From string
	To   []string
	Data string
}

// SMTP starts the server, closed at the end of the test; it returns its
// address (host:port, for QUARRY_SMTP_ADDR) and the messages as they come.
func SMTP(t testing.TB) (addr string, mails <-chan Mail) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	out := make(chan Mail, 16)
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go session(conn, out)
		}
	}()
	return ln.Addr().String(), out
}

// session speaks the little of SMTP a client needs to send one message.
func session(conn net.Conn, out chan<- Mail) {
	defer conn.Close()
	r := bufio.NewReader(conn)
	say := func(s string) { _, _ = io.WriteString(conn, s+"\r\n") }
	say("220 fake ESMTP")
	var m Mail
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		cmd := strings.TrimRight(line, "\r\n")
		switch up := strings.ToUpper(cmd); {
		case strings.HasPrefix(up, "EHLO"), strings.HasPrefix(up, "HELO"):
			say("250-fake")
			say("250 8BITMIME")
		case strings.HasPrefix(up, "MAIL FROM:"):
			m = Mail{From: cmd[len("MAIL FROM:"):]}
			say("250 ok")
		case strings.HasPrefix(up, "RCPT TO:"):
			m.To = append(m.To, cmd[len("RCPT TO:"):])
			say("250 ok")
		case up == "DATA":
			say("354 go on")
			var data strings.Builder
			for {
				l, err := r.ReadString('\n')
				if err != nil {
					return
				}
				if l == ".\r\n" {
					break
				}
				data.WriteString(l)
			}
			m.Data = data.String()
			say("250 queued")
			out <- m
		case up == "QUIT":
			say("221 bye")
			return
		default:
			say("502 no")
		}
	}
}
