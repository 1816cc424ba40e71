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
