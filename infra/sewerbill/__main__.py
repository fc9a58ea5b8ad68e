from sewerbill.cli import main

main()
