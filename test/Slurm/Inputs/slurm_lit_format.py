"""lit's ShTest, except that a failure whose output says the Slurm cluster cannot run here
(Inputs/slurm_cluster.py's "evo-slurm-cluster: UNSUPPORTED: <why>") is UNSUPPORTED, with the
reason printed as a note. A module of its own: lit sends the format to its worker processes."""
import lit.formats
import lit.Test

MARKER = "evo-slurm-cluster: UNSUPPORTED: "


class ClusterTest(lit.formats.ShTest):
    def execute(self, test, litConfig):
        result = super().execute(test, litConfig)
        # lit shows a command's output with each line prefixed "# | ".
        lines = (line[4:] if line.startswith("# | ") else line
                 for line in result.output.splitlines())
        why = next((line[len(MARKER):] for line in lines if line.startswith(MARKER)), None)
        if result.code == lit.Test.FAIL and why is not None:
            litConfig.note("{}: UNSUPPORTED here: {}".format(test.getFullName(), why))
            return lit.Test.Result(lit.Test.UNSUPPORTED, result.output)
        return result
