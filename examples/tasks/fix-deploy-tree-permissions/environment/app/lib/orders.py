"""Orders service (placeholder)."""
import sys

if __name__ == "__main__":
    print("orders service", sys.argv[1:])
