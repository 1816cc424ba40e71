package server

// NotifyHandled reports how many invalidation notifications forwarders
// have handed to sessions (sent, or filtered by a session's log level).
func (a *App) NotifyHandled() int64 { return a.notifyHandled.Load() }
