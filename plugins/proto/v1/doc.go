// Package pluginv1 is the generated Go code for version 1 of the gpuflow
// plugin protocol (plugin.proto in this folder).
//
// Only the adapter packages import it: plugins/sdk (plugin side),
// plugins/client (host side) and plugins/proto/v1/convert (the translation
// to and from plugins/api). Everything else speaks plugins/api.
//
// Regenerate with `go generate ./plugins/proto/v1` after installing protoc
// (Debian: apt-get install protobuf-compiler), protoc-gen-go and
// protoc-gen-go-grpc (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12
// google.golang.org/grpc/cmd/protoc-gen-go-grpc@v1.6.2); the generated
// headers record the versions used.
package pluginv1

//go:generate protoc --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative plugin.proto
