package catalogdir

import (
	"fmt"
	"net/url"
	"strconv"
)

// portProblem says what is wrong with the explicit port of an absolute
// URL, or "" when it has none or a usable one. url.Parse takes any digits
// as a port, so "http://127.0.0.1:99999/api" passed the check and every
// run then failed dialing ("address 99999: invalid port"); a TCP port is
// 1–65535. An empty port ("host:") is the scheme's default, as in HTTP.
// Port 0 is reported too, except in http_backend (placeholderPort).
func portProblem(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	p := u.Port()
	if p == "" {
		return ""
	}
	if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
		return fmt.Sprintf("port %s is not a TCP port (1–65535)", p)
	}
	return ""
}

// placeholderPort reports whether raw names port 0. In http_backend that
// is the documented placeholder for a URL filled in at load time (the
// demo catalogs and the views fixture use http://127.0.0.1:0, which the
// demo server and the tests rebase), so it loads without a word: a
// warning on every `catalog check` of the demo taught new users to
// ignore warnings, and a catalog served as written fails its first call
// with the dial error.
func placeholderPort(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Port() == "0"
}
