"""The refresh loop: append new records, check the frozen suite, refit and publish versions."""
