module github.com/plasmd/plasmd/bench

go 1.26.8

require (
	github.com/extism/go-sdk v1.7.1
	github.com/plasmd/plasmd v0.0.0
	github.com/tetratelabs/wazero v1.12.0
	golang.org/x/sys v0.48.0
)

require (
	github.com/dylibso/observe-sdk/go v0.0.0-20240819160327-2d926c5d788a // indirect
	github.com/gobwas/glob v0.2.3 // indirect
	github.com/ianlancetaylor/demangle v0.0.0-20240805132620-81f5be970eca // indirect
	github.com/tetratelabs/wabin v0.0.0-20230304001439-f6f874872834 // indirect
	go.opentelemetry.io/proto/otlp v1.11.0 // indirect
	golang.org/x/oauth2 v0.37.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/plasmd/plasmd => ../
