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
// Port 0 is reported too; http_backend alone makes it a warning
// (placeholderPort).
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
// is a placeholder for a URL filled in at load time (the demo catalogs
// use http://127.0.0.1:0 and the demo server rebases it; README's
// `catalog check demo/catalogs/tracker` must pass), so it is a warning
// there: the catalog loads, and says its calls cannot be made as written.
func placeholderPort(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && u.Port() == "0"
}
