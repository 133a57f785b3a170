"""The one way tests run the `pstar` CLI in-process: exit code, stdout and stderr."""
from pstar.cli import main


def run_cli(argv, capsys):
    """(exit code, stdout, stderr) of `pstar ARGV`; a SystemExit (argparse) gives its code."""
    try:
        code = main(argv)
    except SystemExit as e:
        code = e.code
    out, err = capsys.readouterr()
    return code, out, err
