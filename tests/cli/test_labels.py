"""meta.labels name the arms in every table and JSON record, and a wrong list is refused by every command."""

from __future__ import annotations

import json

import pytest
import yaml

LABELS = ["plain", "oat", "rye", "chocolate", "matcha"]


@pytest.fixture
def labelled(instance_file, tmp_path):
    """The irrelevant-dims instance (d = 4, x* = arm 3) with one label per arm."""
    mapping = yaml.safe_load(instance_file.read_text())
    mapping["meta"]["labels"] = LABELS
    path = tmp_path / "labelled.yaml"
    path.write_text(yaml.safe_dump(mapping))
    return path


def test_solve_names_the_recommended_arm_in_its_table_and_json(cli, labelled):
    document = json.loads(cli("solve", labelled, "--json").stdout)
    run = document["runs"][0]
    assert run["recommended"] == 3 and run["label"] == "chocolate"
    assert "(choc" in cli("solve", labelled).stdout  # an 80-column table wraps and cuts the label short


def test_bound_names_the_constrained_optimal_arm(cli, labelled):
    assert json.loads(cli("bound", labelled, "--json").stdout)["best_arm_label"] == "chocolate"
    assert "3 (chocolate)" in cli("bound", labelled).stdout


def test_a_file_without_labels_has_null_labels(cli, instance_file):
    assert json.loads(cli("solve", instance_file, "--json").stdout)["runs"][0]["label"] is None


def test_compare_records_carry_the_label(cli, labelled):
    records = json.loads(cli("compare", labelled, "--algos", "g-acol", "--seeds", "2", "--no-bounds",
                             "--json").stdout)["records"]
    assert {record["label"] for record in records} == {"chocolate"}


@pytest.mark.parametrize("labels, message", [(LABELS[:2], "meta.labels: has 2 labels for 5 arms"),
                                             ("plain", "meta.labels: must be a list with one text per arm")])
@pytest.mark.parametrize("command", [("bound",), ("solve",), ("compare", "--algos", "g-acol", "--seeds", "1")])
def test_labels_that_do_not_name_every_arm_are_refused_by_every_command(cli, instance_file, tmp_path, labels,
                                                                         message, command):
    mapping = yaml.safe_load(instance_file.read_text())
    mapping["meta"]["labels"] = labels
    path = tmp_path / "wrong.yaml"
    path.write_text(yaml.safe_dump(mapping))
    result = cli(command[0], path, *command[1:])
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and message in result.stderr, result.stderr
