"""Optimal designs: the solver of the design problem and its conic check (:mod:`.solver`),
the span coordinates, values and certificates both use (:mod:`.geometry`), the rounding of a
design to pulls (:mod:`.rounding`) and the designs one request's runs share (:mod:`.cache`)."""
