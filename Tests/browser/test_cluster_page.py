"""The web page on two nodes of a cluster: the same room in both windows, through a failover of its owner."""
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By

from livecontrols_client import Client
from redis_server import CLUSTER_LEASE_MS
from test_page import button, connected, quantity, wait


def holding(driver) -> str:
    return driver.find_element(By.CSS_SELECTOR, '[data-control="quantity"] .holding').text


def version(driver) -> int:
    return int(driver.find_element(By.ID, "version").get_attribute("textContent"))


def test_windows_on_two_nodes_follow_one_hold_through_the_loss_of_its_owner(cluster, browser):
    owner, n1, n2 = cluster(3)
    first = Client(owner.ws_url)  # the first node to need the room owns it
    first.join(name="first")
    a, b = browser(n1.http_url + "?name=A"), browser(n2.http_url + "?name=B")
    wait(a, connected)
    wait(b, connected)
    wait(a, lambda d: "B" in d.find_element(By.ID, "presence").text, message="presence spans the nodes")
    start = quantity(b)
    plus = button(a, "quantity", "next")
    ActionChains(a).click_and_hold(plus).perform()
    wait(b, lambda d: quantity(d) >= start + 3, message="ticks from the owner reach a window on another node")
    assert "A" in holding(b)
    owner.proc.kill()  # kill -9 of the node running the hold's timer
    wait(b, lambda d: holding(d) == "", timeout=CLUSTER_LEASE_MS / 1000 + 5, message="the hold ends with the failover")
    wait(a, lambda d: holding(d) == "")
    ActionChains(a).release(plus).perform()
    wait(a, lambda d: version(d) == version(b) and quantity(d) == quantity(b), message="both windows show one state")
    # The room carries on under its new owner.
    before = quantity(b)
    button(b, "quantity", "prev").click()
    wait(a, lambda d: quantity(d) == before - 1, message="a click after the failover reaches the other window")
    first.ws.close()
