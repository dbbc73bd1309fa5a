module github.com/ai-hwaccel/ai-hwaccel

go 1.25

require (
	github.com/goccy/go-json v0.12.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
