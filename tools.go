//go:build tools

// Package main keeps the pinned dependencies in go.mod while packages are built out.
package main

import (
	_ "github.com/NimbleMarkets/ntcharts/sparkline"
	_ "github.com/NimbleMarkets/ntcharts/linechart/timeserieslinechart"
	_ "github.com/alecthomas/kong"
	_ "github.com/charmbracelet/bubbles/key"
	_ "github.com/charmbracelet/bubbles/help"
	_ "github.com/charmbracelet/bubbles/table"
	_ "github.com/charmbracelet/bubbles/textinput"
	_ "github.com/charmbracelet/bubbles/viewport"
	_ "github.com/charmbracelet/bubbletea"
	_ "github.com/charmbracelet/lipgloss"
	_ "github.com/muesli/termenv"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "github.com/prometheus/client_model/go"
	_ "github.com/prometheus/common/expfmt"
	_ "github.com/prometheus/common/model"
	_ "github.com/charmbracelet/x/ansi"
)

func main() {}
