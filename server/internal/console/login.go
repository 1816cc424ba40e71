package console

import (
	"net/http"
	"strings"
)

// safeNext keeps a post-login redirect inside the console (no open
// redirect to another site).
func safeNext(next string) string {
	if !strings.HasPrefix(next, "/ui/") || strings.HasPrefix(next, "//") || strings.Contains(next, "\\") {
		return "/ui/"
	}
	return next
}

func (c *Console) loginForm(w http.ResponseWriter, r *http.Request) {
	c.render(w, r, http.StatusOK, "login", "Log in", map[string]any{"Next": safeNext(r.URL.Query().Get("next"))})
}

// login checks a bearer token and keeps it in an HttpOnly, SameSite=Strict
// cookie scoped to /ui, so pages authenticate like API calls do.
func (c *Console) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, 8<<10)
	if err := r.ParseForm(); err != nil {
		http.Error(w, "bad form", http.StatusBadRequest)
		return
	}
	tok := strings.TrimSpace(r.PostForm.Get("token"))
	next := safeNext(r.PostForm.Get("next"))
	if _, ok := c.be.Authenticate(tok); tok == "" || !ok {
		c.render(w, r, http.StatusUnauthorized, "login", "Log in", map[string]any{"Next": next, "Failed": true})
		return
	}
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: tok, Path: "/ui", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil})
	http.Redirect(w, r, next, http.StatusSeeOther)
}

func (c *Console) logout(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/ui", MaxAge: -1, HttpOnly: true, SameSite: http.SameSiteStrictMode})
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}
