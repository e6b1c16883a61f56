"""Client network layer: Selectable transport interface, NetworkClient, Metadata."""

from impl.network.metadata import Cluster, Metadata, Node, PartitionInfo
from impl.network.network_client import (
    ClientRequest,
    ClientResponse,
    ClusterConnectionStates,
    ConnectionState,
    DefaultMetadataUpdater,
    InFlightRequests,
    LeastLoadedNode,
    ManualMetadataUpdater,
    NetworkClient,
    RequestCompletionHandler,
)
from impl.network.selectable import ChannelState, Selectable

__all__ = [
    "ChannelState", "ClientRequest", "ClientResponse", "Cluster", "ClusterConnectionStates",
    "ConnectionState", "DefaultMetadataUpdater", "InFlightRequests", "LeastLoadedNode",
    "ManualMetadataUpdater", "Metadata", "NetworkClient", "Node", "PartitionInfo",
    "RequestCompletionHandler", "Selectable",
]
