"""Panel data model, catalogue, importers, embedded data and the simulator."""
