# needs: cargo
bash scripts/check-book.sh
