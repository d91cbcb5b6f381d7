import sys

print(len(sys.argv) - 1)
sys.exit(3)
