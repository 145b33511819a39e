"""``cbai session serve``: one process that holds a study and serves raters over HTTP.

- :mod:`~cbai_cli.serve.schema`: checks JSON values against the small JSON-schema subset
  the routes use;
- :mod:`~cbai_cli.serve.routes`: the one table of routes (path, method, parameters,
  request and response schemas) and the OpenAPI document made from it;
- :mod:`~cbai_cli.serve.served`: the open study on a thread of its own, with the options;
- :mod:`~cbai_cli.serve.api`: what each route computes, free of the web framework;
- :mod:`~cbai_cli.serve.auth`: the access token;
- :mod:`~cbai_cli.serve.app`: the Starlette application made from the table;
- :mod:`~cbai_cli.serve.rater_page`, :mod:`~cbai_cli.serve.dashboard`,
  :mod:`~cbai_cli.serve.html`: the pages;
- :mod:`~cbai_cli.serve.plot`: the dashboard's SVG plot of the intervals;
- :mod:`~cbai_cli.serve.pictures`: the SVG picture of a driver arm's trajectory;
- :mod:`~cbai_cli.serve.listen`: the command's work: its options, its socket, its links and
  the server (:func:`~cbai_cli.serve.listen.serve`).

Nothing here is imported when ``cbai`` starts; ``cbai session serve``
(:mod:`cbai_cli.cli.session`) imports :mod:`~cbai_cli.serve.listen`, which imports the rest
(and Starlette and uvicorn) when the server runs.
"""
