from inspector.cli.commands import main

raise SystemExit(main())
