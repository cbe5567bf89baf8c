# needs: cargo
bash .ci/run
