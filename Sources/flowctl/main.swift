import FlowCLI

Flowctl.main()
