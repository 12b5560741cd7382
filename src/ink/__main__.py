from ink.cli import main

raise SystemExit(main())
